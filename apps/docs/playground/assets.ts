/// <reference types="vite/client" />
// The guest kernel image and the bundled programs, emitted by Vite as files
// of the site itself (?url) and read from there: nothing comes from
// anywhere else.

import fileioUrl from '../../../packages/kernel/fixtures/bin/fileio?url'
import helloUrl from '../../../packages/kernel/fixtures/bin/hello?url'
import myprogUrl from '../../../packages/kernel/fixtures/bin/myprog?url'
import proctreeUrl from '../../../packages/kernel/fixtures/bin/proctree?url'
import vmlinuxUrl from '../../../packages/kernel/guest/vmlinux?url'
import type { PlaygroundProgram } from './protocol.js'

const PROGRAM_URLS: Record<PlaygroundProgram, string> = {
  hello: helloUrl,
  fileio: fileioUrl,
  myprog: myprogUrl,
  proctree: proctreeUrl,
}

const cache = new Map<string, Promise<Uint8Array>>()

function load(url: string): Promise<Uint8Array> {
  let bytes = cache.get(url)
  if (!bytes) {
    bytes = fetch(url).then(async (r) => {
      if (!r.ok) throw new Error(`${url}: ${r.status} ${r.statusText}`)
      return new Uint8Array(await r.arrayBuffer())
    })
    // A failed load is tried again on the next run.
    bytes.catch(() => cache.delete(url))
    cache.set(url, bytes)
  }
  return bytes
}

export const guestImage = (): Promise<Uint8Array> => load(vmlinuxUrl)

export const programBytes = (name: PlaygroundProgram): Promise<Uint8Array> => load(PROGRAM_URLS[name])
