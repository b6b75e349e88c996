// Maths in rendered text, typeset by KaTeX (static/vendor/katex@0.19.1) as MathML: the browser lays it
// out itself, so no inline style is needed (the page's content security policy refuses them).
// The Markdown renderer leaves each formula as its source text, delimiters included, in
// <span class="math"> or <div class="math">; a formula KaTeX cannot read stays as that text, and the
// raw-text switch still shows the source. Model output is untrusted: KaTeX's trust stays off, so
// \href, \url and \html… show as their own names in red, linking nowhere.
(function () {
  "use strict";
  var DELIMITERS = [["$$", "$$", true], ["\\[", "\\]", true], ["\\(", "\\)", false], ["$", "$", false]];

  function typesetOne(element) {
    var source = element.textContent;
    var body = source;
    var display = element.tagName === "DIV";
    for (var i = 0; i < DELIMITERS.length; i++) {
      var open = DELIMITERS[i][0], close = DELIMITERS[i][1];
      if (source.length >= open.length + close.length && source.indexOf(open) === 0 &&
          source.slice(source.length - close.length) === close) {
        body = source.slice(open.length, source.length - close.length);
        display = display || DELIMITERS[i][2];
        break;
      }
    }
    element.setAttribute("data-typeset", "pending");
    try {
      window.katex.render(body, element, {
        output: "mathml", displayMode: display, throwOnError: true, trust: false, strict: "ignore", maxExpand: 500,
      });
      element.setAttribute("data-typeset", "mathml");
      element.setAttribute("title", source);
    } catch (error) {
      element.textContent = source;  // what KaTeX cannot read stays the text it was
      element.setAttribute("data-typeset", "text");
    }
  }

  function typeset(root) {
    if (!window.katex || !root.querySelectorAll) return;
    var found = root.querySelectorAll(".md .math:not([data-typeset])");
    for (var i = 0; i < found.length; i++) typesetOne(found[i]);
  }

  function start() {
    typeset(document);
    // htmx swaps and live frames add rendered text after the page loaded.
    new MutationObserver(function (changes) {
      for (var i = 0; i < changes.length; i++) {
        for (var j = 0; j < changes[i].addedNodes.length; j++) typeset(changes[i].addedNodes[j]);
      }
    }).observe(document.body, { childList: true, subtree: true });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
