// Next's offline hook for next/font/google (NEXT_FONT_GOOGLE_MOCKED_RESPONSES): the
// stylesheet of the app's one font (Inter, variable, in src/app/layout.tsx) is answered
// with one @font-face whose file is served from 127.0.0.1 by the test (GRAPHRUN_FONT_URL,
// the npm package @fontsource-variable/inter's latin woff2): Turbopack fetches it by URL.
// Turbopack reads this module's own keys (an exact URL), webpack indexes it: any other
// URL it asks for gets the same stylesheet.
const url = process.env.GRAPHRUN_FONT_URL;
if (!url) throw new Error("GRAPHRUN_FONT_URL is not set");
const css = `/* latin */
@font-face {
  font-family: 'Inter';
  font-style: normal;
  font-weight: 100 900;
  font-display: swap;
  src: url(${url}) format('woff2');
  unicode-range: U+0000-00FF, U+0131, U+0152-0153, U+02BB-02BC, U+02C6, U+02DA, U+02DC, U+0304, U+0308, U+0329, U+2000-206F, U+20AC, U+2122, U+2191, U+2193, U+2212, U+2215, U+FEFF, U+FFFD;
}
`;
const responses = {
  "https://fonts.googleapis.com/css2?family=Inter:wght@100..900&display=swap": css,
};
module.exports = new Proxy(responses, {
  get: (target, key) => (typeof key === "string" && key.startsWith("https://") ? css : target[key]),
});
