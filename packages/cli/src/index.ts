// Placeholder: this package's content arrives with its own issue (see shared/DESIGN.md).
export {}
