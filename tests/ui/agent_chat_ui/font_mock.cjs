// Next's offline hook for next/font/google (NEXT_FONT_GOOGLE_MOCKED_RESPONSES), as `next dev`
// with webpack (Next 15) reads it: the stylesheet of the app's one font (Inter, variable, in
// src/app/layout.tsx) is one @font-face whose src is an absolute path, which Next then reads
// from disk (GRAPHRUN_FONT_FILE: the npm package @fontsource-variable/inter's latin woff2).
// Any URL Next asks for gets the same stylesheet.
const file = process.env.GRAPHRUN_FONT_FILE;
if (!file || !file.startsWith("/")) throw new Error("GRAPHRUN_FONT_FILE is not an absolute path");
const css = `/* latin */
@font-face {
  font-family: 'Inter';
  font-style: normal;
  font-weight: 100 900;
  font-display: swap;
  src: url(${file}) format('woff2');
  unicode-range: U+0000-00FF, U+0131, U+0152-0153, U+02BB-02BC, U+02C6, U+02DA, U+02DC, U+0304, U+0308, U+0329, U+2000-206F, U+20AC, U+2122, U+2191, U+2193, U+2212, U+2215, U+FEFF, U+FFFD;
}
`;
module.exports = new Proxy({}, {
  get: (target, key) => (typeof key === "string" && key.startsWith("https://") ? css : target[key]),
});
