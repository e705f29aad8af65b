// probekit, the meta-package: one import for the whole stack.
// Each layer is re-exported here once it has content (see shared/DESIGN.md):
export * from '@probekit/x86-emu'
// Still placeholders, to be added as they land:
// export * from '@probekit/kernel'
// export * from '@probekit/utrace'
// export * from '@probekit/uprobes'
// export * from '@probekit/kprobes'
// export * from '@probekit/optprobes'
