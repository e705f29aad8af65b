import { probekitProject } from '../../vitest.shared.js'

export default probekitProject('bench')
