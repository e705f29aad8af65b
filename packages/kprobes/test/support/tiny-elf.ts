// The kernel package's minimal ELF builder, shared: kprobes tests drive the kernel with the same tiny programs.
export * from '../../../kernel/test/support/tiny-elf.js'
