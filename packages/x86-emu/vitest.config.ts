import { probekitProject } from '../../vitest.shared.js'

export default probekitProject('x86-emu')
