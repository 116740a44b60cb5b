// MathJax for pymdownx.arithmatex (generic mode): $...$ inline, $$...$$ display
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true
  },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "arithmatex"
  }
};
// Material's instant navigation swaps pages without a reload: typeset each page it shows (no-op offline)
document$.subscribe(() => {
  if (window.MathJax && MathJax.typesetPromise) {
    MathJax.typesetPromise()
  }
})
