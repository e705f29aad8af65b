// Issue 15, "Packages": installing only `probekit` from a registry pulls in
// every layer and everything runs. The workspace's packages are built
// (tsc -p tsconfig.build.json), copied with what their "files" publish into a
// scratch workspace, given a snapshot version by changesets and published by
// `changeset publish` (which runs `pnpm publish` per package, turning
// workspace:* into that version) to a verdaccio started on a free localhost
// port; third-party dependencies (commander, ...) come through verdaccio's
// uplink to the public registry. Then, in an empty project: `npm install
// probekit`, `npx probekit demo`, `npx probekit run` on a bundled program,
// and a TypeScript script that boots the kernel and places a kprobe,
// checked by tsc against the published declarations and run by node.
// The scratch workspace keeps the repository's own tree untouched (no
// version bumps, no git tags). Skipped only when npm cannot read a package
// from the public registry, and then loudly: the suite's title and a warning
// say why.

import { type SpawnSyncReturns, spawn, spawnSync } from 'node:child_process'
import {
  accessSync,
  closeSync,
  constants,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const cliDir = fileURLToPath(new URL('../', import.meta.url))
const tsc = join(root, 'node_modules/typescript/bin/tsc')
const changesetBin = join(root, 'node_modules/@changesets/cli/bin.js')
const verdaccioBin = join(cliDir, 'node_modules/verdaccio/bin/verdaccio')
/** The version every package is published at: a prerelease nothing real has. */
const SNAPSHOT_TAG = 'registrytest'
const VERSION = `0.0.0-${SNAPSHOT_TAG}`
/** Generous: CI's machine has 2 cores that other tests share. */
const STEP_TIMEOUT = 300_000

interface Manifest {
  name: string
  version: string
  private?: boolean
  files?: string[]
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  packageManager?: string
}

interface WorkspacePackage {
  dir: string
  manifest: Manifest
}

const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))

/** Every workspace package (pnpm-workspace.yaml's packages/*, apps/*, tools/*). */
function workspacePackages(): WorkspacePackage[] {
  const out: WorkspacePackage[] = []
  for (const group of ['packages', 'apps', 'tools']) {
    for (const name of readdirSync(join(root, group))) {
      const dir = join(root, group, name)
      if (existsSync(join(dir, 'package.json'))) out.push({ dir, manifest: readManifest(dir) })
    }
  }
  return out
}

/**
 * The environment without what a parent npm or pnpm run leaves in it (its registry, its user config,
 * pnpm's own settings), so each npm, pnpm and verdaccio below reads only the machine's npm config.
 */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(npm|pnpm)_(config|package|lifecycle)_/i.test(k)) env[k] = v
  }
  return {
    ...env,
    ...trustedCas,
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    ...extra,
  }
}

/**
 * The certificate authorities npm trusts, for the node processes that reach the public registry
 * without npm (verdaccio's uplink). Behind a TLS-inspecting proxy npm is configured with a cafile,
 * and node's own TLS reads it only through NODE_EXTRA_CA_CERTS, which turbo's strict environment
 * mode does not pass to the test (CI runs it through turbo): without this the uplink fails with
 * SELF_SIGNED_CERT_IN_CHAIN.
 */
const trustedCas = ((): Record<string, string> => {
  if (process.env.NODE_EXTRA_CA_CERTS) return {}
  const r = spawnSync('npm', ['config', 'get', 'cafile'], {
    cwd: tmpdir(),
    env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm|pnpm)_/i.test(k))),
    encoding: 'utf8',
    timeout: 60_000,
  })
  const cafile = r.status === 0 ? r.stdout.trim() : ''
  return cafile !== '' && cafile !== 'null' && cafile !== 'undefined' && existsSync(cafile)
    ? { NODE_EXTRA_CA_CERTS: cafile }
    : {}
})()

function run(
  command: string,
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv; timeout?: number },
): SpawnSyncReturns<string> {
  return spawnSync(command, args, {
    cwd: opts.cwd,
    env: opts.env ?? cleanEnv({}),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: opts.timeout ?? 300_000,
  })
}

/** Runs a step that must succeed; its output is the error when it does not. */
function step(command: string, args: string[], opts: Parameters<typeof run>[2]): string {
  const r = run(command, args, opts)
  if (r.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} (in ${opts.cwd}) failed: ${r.error?.message ?? `status ${r.status}, signal ${r.signal}`}\n${r.stdout}\n${r.stderr}`,
    )
  }
  return r.stdout
}

// The public registry npm is configured with, and whether npm itself can read a package from it
// (npm, not this process's fetch: npm has the machine's proxy and CA settings, which a test run by
// turbo or pnpm may not see in its environment). A fresh cache, so a stale copy cannot answer.
const upstream = (() => {
  const r = run('npm', ['config', 'get', 'registry'], { cwd: tmpdir(), timeout: 60_000 })
  const url = r.status === 0 ? r.stdout.trim() : ''
  return url === '' || url === 'undefined' ? 'https://registry.npmjs.org/' : url.replace(/\/?$/, '/')
})()
const gate = await (async (): Promise<{ reachable: boolean; why: string }> => {
  const cache = mkdtempSync(join(tmpdir(), 'probekit-registry-gate-'))
  let why = ''
  try {
    for (let attempt = 1; attempt <= 3; attempt++) {
      const r = run('npm', ['view', 'commander', 'version', '--prefer-online'], {
        cwd: tmpdir(),
        // The retries are this loop's: npm's own back off for minutes on a refused connection.
        env: cleanEnv({
          npm_config_cache: cache,
          npm_config_registry: upstream,
          npm_config_fetch_retries: '0',
          npm_config_fetch_timeout: '30000',
        }),
        timeout: 60_000,
      })
      if (r.status === 0 && /^\d+\.\d+\.\d+/.test(r.stdout.trim())) return { reachable: true, why: '' }
      const said = `${r.stderr}`
        .split('\n')
        .find((l) => /npm (error|ERR!)/.test(l) && !/A complete log/.test(l))
      why = r.error?.message ?? said?.trim() ?? `npm exited with status ${r.status}`
      if (attempt < 3) await new Promise((resolve) => setTimeout(resolve, attempt * 5_000))
    }
  } finally {
    rmSync(cache, { recursive: true, force: true })
  }
  return { reachable: false, why }
})()
const reachable = gate.reachable
if (!reachable)
  console.warn(`registry.test.ts: SKIPPED, npm cannot reach ${upstream} (npm view commander: ${gate.why})`)

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      )
    })
  })
}

async function waitForRegistry(url: string, log: string, server: ReturnType<typeof spawn>): Promise<void> {
  const deadline = Date.now() + 120_000
  while (Date.now() < deadline && server.exitCode === null) {
    const ok = await fetch(`${url}-/ping`, { signal: AbortSignal.timeout(5_000) }).then(
      (r) => r.ok,
      () => false,
    )
    if (ok) return
    await new Promise((r) => setTimeout(r, 250))
  }
  throw new Error(`verdaccio did not answer at ${url}:\n${readFileSync(log, 'utf8')}`)
}

// The suite's title says why it was skipped, where a report lists it.
const suiteTitle = reachable
  ? 'probekit from a registry'
  : `probekit from a registry - SKIPPED: npm cannot reach ${upstream} (${gate.why})`

describe.skipIf(!reachable)(suiteTitle, () => {
  let scratch = ''
  let registry = ''
  let verdaccio: ReturnType<typeof spawn> | undefined
  let project = ''
  let installEnv: NodeJS.ProcessEnv = {}
  const published: WorkspacePackage[] = workspacePackages().filter((p) => !p.manifest.private)

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'probekit-registry-'))

    // 1. Build every published package (each build reads the others' sources, so in any order).
    for (const p of published) {
      rmSync(join(p.dir, 'dist'), { recursive: true, force: true })
      step(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: p.dir, timeout: 600_000 })
    }

    // 2. A scratch workspace holding what each package publishes (its "files", README, LICENSE).
    const ws = join(scratch, 'workspace')
    const rootManifest = readManifest(root)
    mkdirSync(join(ws, '.changeset'), { recursive: true })
    writeFileSync(
      join(ws, 'package.json'),
      JSON.stringify({
        name: 'probekit-scratch',
        private: true,
        packageManager: rootManifest.packageManager,
      }),
    )
    writeFileSync(join(ws, 'pnpm-workspace.yaml'), 'packages:\n  - packages/*\n')
    const copies = new Map<string, string>()
    for (const p of published) {
      const dest = join(ws, 'packages', p.manifest.name.replace(/^@probekit\//, ''))
      copies.set(p.manifest.name, dest)
      for (const entry of ['package.json', 'README.md', 'LICENSE', ...(p.manifest.files ?? [])]) {
        if (!existsSync(join(p.dir, entry)))
          throw new Error(`${p.manifest.name} publishes ${entry}, which is missing`)
        cpSync(join(p.dir, entry), join(dest, entry), { recursive: true })
      }
    }
    // pnpm publish reads a workspace:* dependency's version through node_modules, as an install links it.
    const byName = new Map(workspacePackages().map((p) => [p.manifest.name, p.dir]))
    for (const p of published) {
      const dest = copies.get(p.manifest.name)!
      const m = p.manifest
      const specs = {
        ...m.dependencies,
        ...m.devDependencies,
        ...m.peerDependencies,
        ...m.optionalDependencies,
      }
      for (const [dep, spec] of Object.entries(specs)) {
        if (!spec.startsWith('workspace:')) continue
        const link = join(dest, 'node_modules', dep)
        mkdirSync(dirname(link), { recursive: true })
        symlinkSync(copies.get(dep) ?? byName.get(dep)!, link, 'dir')
      }
    }
    // The repository's changesets config, less what names packages not copied here and the changelog.
    const config = JSON.parse(readFileSync(join(root, '.changeset/config.json'), 'utf8'))
    writeFileSync(
      join(ws, '.changeset/config.json'),
      JSON.stringify({ ...config, changelog: false, ignore: [], snapshot: { prereleaseTemplate: '{tag}' } }),
    )
    writeFileSync(
      join(ws, '.changeset/registry-test.md'),
      `---\n${published.map((p) => `'${p.manifest.name}': patch`).join('\n')}\n---\n\nThe registry test's release.\n`,
    )

    // 3. verdaccio: our packages are local only, everything else comes from the public registry.
    const port = await freePort()
    registry = `http://127.0.0.1:${port}/`
    const v = join(scratch, 'verdaccio')
    mkdirSync(v)
    const yaml = [
      `storage: ${join(v, 'storage')}`,
      'auth:',
      '  htpasswd:',
      `    file: ${join(v, 'htpasswd')}`,
      'uplinks:',
      '  upstream:',
      `    url: ${upstream}`,
      '    timeout: 60s',
      'packages:',
      "  'probekit':",
      '    access: $all',
      '    publish: $authenticated',
      "  '@probekit/*':",
      '    access: $all',
      '    publish: $authenticated',
      "  '**':",
      '    access: $all',
      '    proxy: upstream',
      'log: { type: stdout, format: pretty, level: warn }',
      '',
    ].join('\n')
    writeFileSync(join(v, 'config.yaml'), yaml)
    const log = join(v, 'verdaccio.log')
    const logFd = openSync(log, 'w')
    verdaccio = spawn(
      process.execPath,
      [verdaccioBin, '--config', join(v, 'config.yaml'), '--listen', `127.0.0.1:${port}`],
      { cwd: v, env: cleanEnv({}), stdio: ['ignore', logFd, logFd] },
    )
    closeSync(logFd) // the child has its own
    await waitForRegistry(registry, log, verdaccio)
    // A user to publish as (verdaccio's htpasswd registration), and an npmrc with its token.
    const user = await fetch(`${registry}-/user/org.couchdb.user:probekit`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'probekit', password: 'probekit-registry-test' }),
    })
    const { token } = (await user.json()) as { token?: string }
    if (!token) throw new Error(`verdaccio refused the test user (${user.status})`)
    const npmrc = join(scratch, 'npmrc')
    writeFileSync(npmrc, `registry=${registry}\n//127.0.0.1:${port}/:_authToken=${token}\n`)

    // 4. changesets: the snapshot version, then publish. pnpm publish replaces workspace:* and
    // --no-git-tag keeps changesets away from git; the packages were built above, so no prepack.
    const pnpmVersion = rootManifest.packageManager?.replace(/^pnpm@/, '') ?? 'latest'
    const pnpmPath = step('npx', ['-y', '-p', `pnpm@${pnpmVersion}`, '-c', 'command -v pnpm'], {
      cwd: scratch,
    }).trim()
    mkdirSync(join(scratch, 'bin'))
    symlinkSync(pnpmPath, join(scratch, 'bin/pnpm'))
    const publishEnv = cleanEnv({
      PATH: `${join(scratch, 'bin')}:${process.env.PATH}`,
      npm_config_registry: registry,
      npm_config_userconfig: npmrc,
      npm_config_ignore_scripts: 'true',
    })
    step(process.execPath, [changesetBin, 'version', '--snapshot', SNAPSHOT_TAG], {
      cwd: ws,
      env: publishEnv,
    })
    for (const p of published) expect(readManifest(copies.get(p.manifest.name)!).version).toBe(VERSION)
    step(process.execPath, [changesetBin, 'publish', '--no-git-tag'], { cwd: ws, env: publishEnv })

    // 5. An empty project installs probekit alone.
    project = join(scratch, 'project')
    mkdirSync(project)
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }),
    )
    installEnv = cleanEnv({
      npm_config_registry: registry,
      npm_config_userconfig: npmrc,
      npm_config_cache: join(scratch, 'npm-cache'),
    })
    step('npm', ['install', 'probekit'], { cwd: project, env: installEnv })
  }, 1_800_000)

  afterAll(async () => {
    if (verdaccio && verdaccio.exitCode === null) {
      const exited = new Promise((r) => verdaccio?.once('exit', r))
      verdaccio.kill('SIGTERM')
      await exited
    }
    if (scratch) rmSync(scratch, { recursive: true, force: true })
  }, 60_000)

  it(
    'installs every layer at the published version, with no tsx or esbuild',
    () => {
      const installed = (name: string) => readManifest(join(project, 'node_modules', name))
      for (const p of published) expect(installed(p.manifest.name).version).toBe(VERSION)
      expect(existsSync(join(project, 'node_modules/tsx'))).toBe(false)
      expect(existsSync(join(project, 'node_modules/esbuild'))).toBe(false)
      expect(existsSync(join(project, 'node_modules/probekit/LICENSE'))).toBe(true)
    },
    STEP_TIMEOUT,
  )

  it(
    'runs npx probekit demo',
    () => {
      const r = run('npx', ['--no', 'probekit', 'demo'], { cwd: project, env: installEnv })
      expect(r.stderr).toBe('')
      expect(r.status).toBe(0)
      for (const section of [
        '1. The guest kernel booted on 2 vCPUs',
        "3. The seeds' kprobe and jprobe examples on do_fork",
        "4. The seeds' kretprobe example on sys_open",
        "5. The seeds' uprobe example on myprog's myfunc",
        '6. Jump optimization',
      ]) {
        expect(r.stdout).toContain(section)
      }
      expect(r.stdout).toMatch(/do_sys_open hit [1-9]\d* times through the jump/)
    },
    STEP_TIMEOUT,
  )

  it(
    'runs npx probekit run on a bundled program',
    () => {
      const hello = join(project, 'node_modules/@probekit/kernel/fixtures/bin/hello')
      // Published with its execute bit (publishConfig.executableFiles): execve, and so probekit run, wants it.
      expect(() => accessSync(hello, constants.X_OK)).not.toThrow()
      const r = run('npx', ['--no', 'probekit', 'run', hello], { cwd: project, env: installEnv })
      expect(r.stderr).toBe('')
      expect(r.stdout).toBe('hello, world\n')
      expect(r.status).toBe(0)
    },
    STEP_TIMEOUT,
  )

  it(
    'type-checks and runs a script that places a kprobe through the published packages',
    () => {
      writeFileSync(
        join(project, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            outDir: 'out',
            // The published declarations are checked too, not only the script.
            skipLibCheck: false,
            types: ['node'],
            typeRoots: [join(root, 'node_modules/@types')],
          },
          files: ['probe.ts'],
        }),
      )
      writeFileSync(
        join(project, 'probe.ts'),
        `import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { Kernel } from '@probekit/kernel'
import { type Kprobe, Kprobes } from '@probekit/kprobes'
import * as probekit from 'probekit'

const require = createRequire(import.meta.url)
const shipped = (path: string) => new Uint8Array(readFileSync(require.resolve(path)))

const out: string[] = []
const kernel = new Kernel({
  image: shipped('@probekit/kernel/guest/vmlinux'),
  cpus: 1,
  stdout: (data) => {
    out.push(new TextDecoder().decode(data))
  },
})
kernel.vfs.writeFile('/bin/fileio', shipped('@probekit/kernel/fixtures/bin/fileio'))
kernel.boot()
const kprobes = new Kprobes(kernel)
const dfds: number[] = []
const probe: Kprobe = {
  symbol_name: 'do_sys_open',
  pre_handler: (_p, regs) => {
    dfds.push(regs.get('di') | 0) // int dfd
    return 0
  },
}
const registered = kprobes.register_kprobe(probe)
kernel.spawn('/bin/fileio', ['/bin/fileio', '/tmp'])
const { exit } = kernel.run(500_000_000)
kprobes.unregister_kprobe(probe)
console.log(
  JSON.stringify({
    registered,
    hits: dfds.length,
    atFdcwd: dfds.filter((d) => d === -100).length,
    status: exit?.status,
    wrote: out.join('').length,
    metaPackage: probekit.Kernel === Kernel && probekit.Kprobes === Kprobes,
  }),
)
`,
      )
      step(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project })
      const r = run(process.execPath, ['out/probe.js'], { cwd: project, env: installEnv })
      expect(r.stderr).toBe('')
      expect(r.status).toBe(0)
      const result = JSON.parse(r.stdout)
      expect(result.registered).toBe(0)
      expect(result.status).toBe(0)
      expect(result.wrote).toBeGreaterThan(0)
      // fileio opens relative paths (dfd AT_FDCWD) and one through a directory fd.
      expect(result.hits).toBeGreaterThan(1)
      expect(result.atFdcwd).toBeGreaterThan(0)
      expect(result.atFdcwd).toBeLessThan(result.hits)
      expect(result.metaPackage).toBe(true)
    },
    STEP_TIMEOUT,
  )

  it(
    'rejects a script that misuses the published types',
    () => {
      writeFileSync(
        join(project, 'bad.ts'),
        `import { Kprobes } from '@probekit/kprobes'\nexport const r: string = Kprobes.prototype.register_kprobe({ symbol_name: 42 })\n`,
      )
      const r = run(
        process.execPath,
        [tsc, '--noEmit', '--strict', '--module', 'NodeNext', '--moduleResolution', 'NodeNext', 'bad.ts'],
        { cwd: project },
      )
      expect(r.status).not.toBe(0)
      expect(r.stdout).toContain('TS2322')
    },
    STEP_TIMEOUT,
  )
})

describe('the meta-package', () => {
  it('re-exports every layer, one value per name', async () => {
    const meta: Record<string, unknown> = await import('../src/index.js')
    const layers = [
      '@probekit/x86-emu',
      '@probekit/kernel',
      '@probekit/utrace',
      '@probekit/uprobes',
      '@probekit/kprobes',
      '@probekit/optprobes',
    ]
    for (const layer of layers) {
      const mod: Record<string, unknown> = await import(layer)
      for (const [name, value] of Object.entries(mod)) {
        // A name two layers export resolves to one of them; the pairs are the same constant.
        expect(meta[name], `${layer}'s ${name}`).toBe(value)
      }
    }
  })
})
