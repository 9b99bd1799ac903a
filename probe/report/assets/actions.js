// The report's Copy narrative and Export CSV buttons. Both work offline and
// from file://: the page carries narrative.md and results.csv byte for byte
// (base64 in the script elements "narrative-md" and "results-csv").
(function () {
  "use strict";
  var status = document.getElementById("action-status");
  function embedded(id) {
    var b64 = JSON.parse(document.getElementById(id).textContent || '""');
    var bin = atob(b64), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return bytes;
  }
  function say(text) { status.textContent = text; }
  var blobLink = window.URL.createObjectURL.bind(window.URL);
  var revoke = window.URL.revokeObjectURL.bind(window.URL);

  // copyFallback selects the text in a textarea and runs the copy command:
  // the way to copy where the clipboard API is missing or refused (pages
  // opened from file:// in some browsers). When even that fails the
  // textarea stays visible and selected for Ctrl+C.
  function copyFallback(text) {
    var ta = document.getElementById("copy-fallback");
    ta.value = text;
    ta.hidden = false;
    ta.focus();
    ta.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    if (ok) {
      ta.hidden = true;
      say("narrative.md copied (" + text.length + " characters).");
    } else {
      say("The browser refused to copy: the narrative is selected below, press Ctrl+C (⌘C).");
    }
  }

  var copyBtn = document.getElementById("copy-narrative");
  copyBtn.addEventListener("click", function () {
    var text = new TextDecoder("utf-8").decode(embedded("narrative-md"));
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(function () {
        say("narrative.md copied (" + text.length + " characters).");
      }, function () { copyFallback(text); });
    } else {
      copyFallback(text);
    }
  });

  document.getElementById("export-csv").addEventListener("click", function () {
    if (!JSON.parse(document.getElementById("results-csv").textContent || '""')) {
      // Too large to embed: the file beside the page.
      var l = document.createElement("a");
      l.href = "results.csv";
      l.download = "results.csv";
      document.body.appendChild(l);
      l.click();
      l.remove();
      say("results.csv is too large to embed: the copy beside this page is downloaded.");
      return;
    }
    var blob = new Blob([embedded("results-csv")], { type: "text/csv" });
    var a = document.createElement("a");
    a.href = blobLink(blob);
    a.download = "results.csv";
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { revoke(a.href); }, 60000);
    say("results.csv exported (" + blob.size + " bytes).");
  });
})();
