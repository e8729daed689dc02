// Package libnbd stands in for libguestfs.org/libnbd when CDI is built here: the real package is
// cgo against libnbd's headers, which Debian does not package for Go, and only CDI's VDDK
// (VMware) import path uses it, which Agentry never takes. Every call fails with ENOTSUP.
package libnbd

import "syscall"

// Flags and states the importer names (values as in libnbd 1.11).
const (
	CMD_FLAG_REQ_ONE = 0x08
	STATE_HOLE       = 0x01
	STATE_ZERO       = 0x02
)

// LibnbdError is libnbd's error type.
type LibnbdError struct {
	Op     string
	Errmsg string
	Errno  syscall.Errno
}

func (e *LibnbdError) Error() string { return e.Op + ": " + e.Errmsg }

func unsupported(op string) *LibnbdError {
	return &LibnbdError{Op: op, Errmsg: "libnbd is not built into this CDI importer", Errno: syscall.ENOTSUP}
}

// ExtentCallback receives block status extents.
type ExtentCallback func(metacontext string, offset uint64, entries []uint32, err *int) int

// PreadOptargs are Pread's optional arguments.
type PreadOptargs struct {
	FlagsSet bool
	Flags    uint32
}

// BlockStatusOptargs are BlockStatus's optional arguments.
type BlockStatusOptargs struct {
	FlagsSet bool
	Flags    uint32
}

// Libnbd is a connection handle; this stub never makes one.
type Libnbd struct{}

// Create always fails: there is no libnbd here.
func Create() (*Libnbd, error) { return nil, unsupported("create") }

func (h *Libnbd) AddMetaContext(name string) error { return unsupported("add_meta_context") }
func (h *Libnbd) ConnectUri(uri string) error      { return unsupported("connect_uri") }
func (h *Libnbd) GetSize() (uint64, error)         { return 0, unsupported("get_size") }
func (h *Libnbd) Pread(buf []byte, offset uint64, optargs *PreadOptargs) error {
	return unsupported("pread")
}
func (h *Libnbd) BlockStatus(count, offset uint64, cb ExtentCallback, optargs *BlockStatusOptargs) error {
	return unsupported("block_status")
}
func (h *Libnbd) Close() *LibnbdError { return nil }
