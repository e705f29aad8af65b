// TextEncoder and TextDecoder are in every JavaScript host probekit targets
// (Node, browsers) but not in the ES library types this package compiles
// against (it uses no DOM or Node API): declare just what is used.

declare class TextEncoder {
  encode(input?: string): Uint8Array
}

declare class TextDecoder {
  constructor(label?: string)
  decode(input?: ArrayBufferView | ArrayBuffer): string
}
