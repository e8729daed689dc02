module agentry.local/realnode-probe

go 1.26
