// Public decoder API.
export { decode, tryDecode } from './decode.js'
export {
  DecodeError,
  type DecodeFailure,
  type Encoding,
  type Instruction,
  InstructionFlag,
  type OpcodeMap,
  type Operand,
  type SegmentRegister,
} from './instruction.js'
