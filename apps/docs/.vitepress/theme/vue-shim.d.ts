// Single-file components, as tsc sees them (Vite compiles them; vue-tsc is not a dependency).
declare module '*.vue' {
  import type { DefineComponent } from 'vue'

  const component: DefineComponent
  export default component
}
