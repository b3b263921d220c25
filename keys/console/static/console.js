// Latchkey console: copy the new API key's token to the clipboard.
// Loaded as an external file: the console's CSP allows no inline script.
(function () {
  "use strict";

  function copyBySelection(target) {
    target.focus();
    target.select();
    try {
      return document.execCommand("copy");
    } catch (e) {
      return false;
    }
  }

  document.querySelectorAll("[data-copy]").forEach(function (button) {
    var target = document.getElementById(button.getAttribute("data-copy"));
    var status = document.getElementById(button.getAttribute("data-copy-status"));
    if (!target) {
      return;
    }
    var label = button.textContent;
    function done(ok) {
      button.textContent = ok ? "Copied" : label;
      if (status) {
        status.textContent = ok
          ? "Token copied to the clipboard."
          : "Could not copy automatically: the token is selected, press Ctrl+C (or \u2318C).";
      }
      if (ok) {
        setTimeout(function () { button.textContent = label; }, 2500);
      }
    }
    button.hidden = false;
    button.addEventListener("click", function () {
      var text = target.value;
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
