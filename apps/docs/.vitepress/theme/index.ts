// The default theme without its bundled Inter web font: the site must build
// and render offline, and system fonts are fine for documentation.
import DefaultTheme from 'vitepress/theme-without-fonts'

export default DefaultTheme
