// UTF-8 through the host's TextEncoder/TextDecoder, which every JavaScript
// host probekit targets has (Node, browsers) but the ES library types this
// package compiles against do not declare (it uses no DOM or Node API).

interface Codecs {
  TextEncoder: new () => { encode(input: string): Uint8Array }
  TextDecoder: new () => { decode(input: Uint8Array): string }
}

const host = globalThis as unknown as Codecs
const encoder = new host.TextEncoder()
const decoder = new host.TextDecoder()

export function utf8Encode(s: string): Uint8Array {
  return encoder.encode(s)
}

export function utf8Decode(b: Uint8Array): string {
  return decoder.decode(b)
}
