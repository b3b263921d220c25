// Latchkey console: copy buttons for a new API key's token, a generated
// password and the signing keys' public keys.
// Loaded as an external file: the console's CSP allows no inline script.
(function () {
  "use strict";

  // textOf returns what a copy button copies: a field's value, or an
  // element's text.
  function textOf(target) {
    return "value" in target && typeof target.value === "string" ? target.value : target.textContent.trim();
  }

  // copyBySelection selects the target's text, so that the user can copy it
  // by hand, and asks the browser to copy it.
  function copyBySelection(target) {
    if (typeof target.select === "function") {
      target.focus();
      target.select();
    } else {
      var range = document.createRange();
      range.selectNodeContents(target);
      var sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
    }
    try {
      return document.execCommand("copy");
    } catch (e) {
      return false;
    }
  }

  document.querySelectorAll("[data-copy]").forEach(function (button) {
    var target = document.getElementById(button.getAttribute("data-copy"));
    var status = document.getElementById(button.getAttribute("data-copy-status"));
    var what = button.getAttribute("data-copy-what") || "The text";
    if (!target) {
      return;
    }
    var label = button.innerHTML;
    function done(ok) {
      if (ok) {
        button.textContent = "Copied";
        setTimeout(function () { button.innerHTML = label; }, 2500);
      }
      if (status) {
        status.textContent = ok
          ? what + " is copied to the clipboard."
          : "Could not copy automatically: the text is selected, press Ctrl+C (or \u2318C).";
      }
    }
    button.hidden = false;
    button.addEventListener("click", function () {
      var text = textOf(target);
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(
          function () { done(true); },
          function () { done(copyBySelection(target)); }
        );
      } else {
        done(copyBySelection(target));
      }
    });
  });

  document.querySelectorAll("[data-select-on-focus]").forEach(function (el) {
    el.addEventListener("focus", function () { el.select(); });
  });
})();
