// Package libnbd is a stand-in for libguestfs.org/libnbd, whose cgo needs libnbd's headers and
// library. KubeVirt v1.8.0 uses it only in virt-launcher's NBD client (changed-block tracking for
// incremental backups, behind a feature gate); Agentry never calls it. Every call fails, so that
// path reports an error instead of the launcher failing to build.
package libnbd

import "errors"

// ErrUnavailable is what every call returns.
var ErrUnavailable = errors.New("libnbd is not available in this build")

// Meta contexts and extent flags, with libnbd's values.
const (
	CONTEXT_BASE_ALLOCATION   = "base:allocation"
	CONTEXT_QEMU_DIRTY_BITMAP = "qemu:dirty-bitmap:"
	STATE_HOLE                = 1
	STATE_ZERO                = 2
	STATE_DIRTY               = 1
)

// LibnbdExtent is one extent of a block-status reply.
type LibnbdExtent struct {
	Length uint64
	Flags  uint64
}

// Libnbd is a connection handle.
type Libnbd struct{}

// ExtentCallback is called with the extents of a block-status reply.
type ExtentCallback func(metacontext string, offset uint64, entries []LibnbdExtent, err *int) int

// BlockStatus64Optargs are BlockStatus64's optional arguments.
type BlockStatus64Optargs struct{}

// PreadOptargs are Pread's optional arguments.
type PreadOptargs struct{}

// Create fails: there is no libnbd.
func Create() (*Libnbd, error) { return nil, ErrUnavailable }

// Close does nothing.
func (l *Libnbd) Close() error { return nil }

// AddMetaContext fails.
func (l *Libnbd) AddMetaContext(string) error { return ErrUnavailable }

// CanMetaContext fails.
func (l *Libnbd) CanMetaContext(string) (bool, error) { return false, ErrUnavailable }

// GetSize fails.
func (l *Libnbd) GetSize() (uint64, error) { return 0, ErrUnavailable }

// SetExportName fails.
func (l *Libnbd) SetExportName(string) error { return ErrUnavailable }

// ConnectUnix fails.
func (l *Libnbd) ConnectUnix(string) error { return ErrUnavailable }

// BlockStatus64 fails.
func (l *Libnbd) BlockStatus64(uint64, uint64, ExtentCallback, *BlockStatus64Optargs) error {
	return ErrUnavailable
}

// Pread fails.
func (l *Libnbd) Pread([]byte, uint64, *PreadOptargs) error { return ErrUnavailable }
