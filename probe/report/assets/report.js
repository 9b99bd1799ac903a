// The trial table of a fragility report: filters, rows built from the inline
// JSON (id "trial-data"), and a detail view per row. No network access.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("trial-data").textContent);
  var PAGE = 300; // rows added per "show more"
  var MAXH = 4; // bits at which the token colour saturates (most tokens of a greedy answer are under 1 bit)
  var body = document.querySelector("#trial-table tbody");
  var more = document.getElementById("more");
  var count = document.getElementById("f-count");
  var sel = {
    model: document.getElementById("f-model"),
    variant: document.getElementById("f-variant"),
    template: document.getElementById("f-template"),
    correct: document.getElementById("f-correct"),
    cut: document.getElementById("f-cut")
  };
  function fill(select, names) {
    names.forEach(function (n, i) {
      var o = document.createElement("option");
      o.value = String(i);
      o.textContent = n;
      select.appendChild(o);
    });
  }
  fill(sel.model, data.models);
  fill(sel.variant, data.variants);
  fill(sel.template, data.templates);

  var matches = [];
  var shown = 0;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function outcome(c) { return c === 1 ? "right" : c === 0 ? "wrong" : "skipped"; }
  // colour of an entropy in bits: white (0) to vermillion (MAXH and more).
  function heat(h) {
    var t = Math.min(h / MAXH, 1);
    var r = Math.round(255 - t * (255 - 213)), g = Math.round(255 - t * (255 - 94)), b = Math.round(255 - t * 255);
    return "rgb(" + r + "," + g + "," + b + ")";
  }

  // Chat-template special tokens (<|im_start|>, <start_of_turn>, [INST], …)
  // are folded into small labelled chips; their raw text is in the title.
  var SPECIAL = /(<\|[^|<>\s]{1,40}\|>|<\/?(?:start_of_turn|end_of_turn|bos|eos|s|pad)>|\[\/?INST\])/;
  function appendFolded(parent, text) {
    text.split(SPECIAL).forEach(function (part, i) {
      if (part === "") return;
      if (i % 2 === 1) {
        var chip = el("span", "special", part.replace(/^[<\[]\|?\/?|\|?[>\]]$/g, ""));
        chip.title = "chat-template special token " + part;
        parent.appendChild(chip);
      } else {
        parent.appendChild(document.createTextNode(part));
      }
    });
    return parent;
  }
  function foldedPre(text, cls) { return appendFolded(el("pre", cls || ""), text); }

  // The columns: header text is in the page; key gives the value a column
  // sorts by.
  var COLS = [
    function (r) { return data.models[r.m]; }, function (r) { return data.templates[r.t]; },
    function (r) { return r.v; }, function (r) { return r.i; }, function (r) { return r.l || ""; },
    function (r) { return r.st; }, function (r) { return r.c; }, function (r) { return r.u; },
    function (r) { return r.ek || ""; }, function (r) { return numOr(r.x); }, function (r) { return numOr(r.e); },
    function (r) { return r.r; }, function (r) { return r.n; }, function (r) { return r.c === -1 ? -1 : r.h; }
  ];
  function numOr(x) { var f = parseFloat(x); return x !== "" && x !== undefined && isFinite(f) && String(f) === String(+x) ? f : (x || ""); }

  function row(r) {
    var tr = el("tr", "row");
    tr.dataset.id = r.id;
    var cells = [
      [data.models[r.m]], [data.templates[r.t]], [data.variants[r.v]], [r.i, "num"], [r.l || ""], [r.st, "num"],
      [outcome(r.c), outcome(r.c)], [r.u ? "cut" : "", r.u ? "cut" : ""], [r.ek || ""], [r.x || "—"], [r.e], [r.r], [r.n, "num"],
      [r.c === -1 ? "" : r.h.toFixed(3), "num"]
    ];
    cells.forEach(function (c) { tr.appendChild(el("td", c[1] || "", String(c[0]))); });
    tr.addEventListener("click", function () { toggle(tr, r); });
    return tr;
  }

  function detail(r) {
    var td = el("td");
    td.colSpan = COLS.length;
    if (r.d) {
      td.appendChild(el("h4", "", "Question against its reference (" + r.rv + "): removed words struck out, added words highlighted"));
      var dp = el("p", "diff");
      r.d.forEach(function (run) {
        var op = run.charAt(0), text = run.slice(1);
        dp.appendChild(op === "=" ? document.createTextNode(text) : el(op === "+" ? "ins" : "del", "", text));
      });
      td.appendChild(dp);
    }
    td.appendChild(el("h4", "", "Prompt (chat-template special tokens folded; hover one for its text)"));
    if (r.p >= 0) {
      if (data.prefix) {
        var d = el("details");
        d.appendChild(el("summary", "", "instruction and worked examples shared by every prompt (" + data.prefix.length + " characters)"));
        d.appendChild(foldedPre(data.prefix));
        td.appendChild(d);
      }
      td.appendChild(foldedPre(data.prompts[r.p]));
    } else {
      td.appendChild(foldedPre(r.q || ""));
    }
    if (r.s) {
      td.appendChild(el("p", "note", "Skipped: " + r.s));
      return td;
    }
    td.appendChild(el("h4", "", "Response (extracted answer marked; rule " + r.r + ")"));
    var parts = r.a;
    if (!parts) {
      var text = r.k.join("");
      parts = [text.slice(0, r.at[0]), text.slice(r.at[0], r.at[1]), text.slice(r.at[1])];
    }
    var pre = el("pre", "response");
    appendFolded(pre, parts[0]);
    if (parts[1]) pre.appendChild(el("mark", "answer", parts[1]));
    appendFolded(pre, parts[2]);
    if (r.u) td.appendChild(el("p", "note", "The output budget ended this answer (" + r.n + " tokens)."));
    td.appendChild(pre);
    if (r.k && r.k.length) {
      var h = el("h4", "", "Tokens by entropy ");
      var sc = el("span", "scale");
      sc.appendChild(document.createTextNode("0 bits"));
      var bar = el("span", "bar");
      bar.style.background = "linear-gradient(to right," + heat(0) + "," + heat(MAXH) + ")";
      sc.appendChild(bar);
      sc.appendChild(document.createTextNode("≥ " + MAXH + " bits; answer tokens outlined"));
      h.appendChild(sc);
      td.appendChild(h);
      var box = el("div", "tokens");
      var ans = null; // the answer tokens go into one outlined span
      for (var i = 0; i < r.k.length; i++) {
        var bits = r.b[i] / 100;
        var special = SPECIAL.test(r.k[i]) && r.k[i].replace(SPECIAL, "") === "";
        var s = special ? appendFolded(el("span", "tok"), r.k[i]) : el("span", "tok", r.k[i]);
        s.style.background = heat(bits);
        s.title = "token " + (i + 1) + ": H = " + bits.toFixed(2) + " bits";
        if (i >= r.w[0] && i < r.w[1]) {
          if (!ans) box.appendChild(ans = el("span", "ans"));
          ans.appendChild(s);
        } else {
          box.appendChild(s);
        }
      }
      td.appendChild(box);
    } else if (r.n > 0) {
      td.appendChild(el("p", "note", "Token entropies are not shown for this trial (the page keeps " + data.token_cap + " tokens; see traces.jsonl)."));
    }
    return td;
  }

  function toggle(tr, r) {
    var next = tr.nextElementSibling;
    if (next && next.classList.contains("detail")) {
      next.remove();
      tr.classList.remove("open");
      return;
    }
    var d = el("tr", "detail");
    d.appendChild(detail(r));
    tr.after(d);
    tr.classList.add("open");
  }

  function showMore() {
    var frag = document.createDocumentFragment();
    var end = Math.min(shown + PAGE, matches.length);
    for (; shown < end; shown++) frag.appendChild(row(matches[shown]));
    body.appendChild(frag);
    more.hidden = shown >= matches.length;
    count.textContent = matches.length + " of " + data.rows.length + " trials" + (shown < matches.length ? " (" + shown + " shown)" : "");
  }

  function apply() {
    var m = sel.model.value, v = sel.variant.value, t = sel.template.value, c = sel.correct.value, u = sel.cut.value;
    matches = data.rows.filter(function (r) {
      return (m === "" || r.m === +m) && (v === "" || r.v === +v) && (t === "" || r.t === +t) && (c === "" || r.c === +c) &&
        (u === "" || r.u === +u);
    });
    sortRows();
    body.textContent = "";
    shown = 0;
    showMore();
  }

  // Sorting: a click on a column header sorts by it, ascending, a second
  // click descending; ties keep the table's order (model, template, variant,
  // instance).
  var sortCol = -1, sortDir = 1;
  function cmpVals(a, b) {
    if (typeof a === "number" && typeof b === "number") return a - b;
    if (typeof a === "number") return -1;
    if (typeof b === "number") return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  function sortRows() {
    if (sortCol < 0) return;
    var key = COLS[sortCol];
    matches = matches.map(function (r, i) { return [key(r), i, r]; })
      .sort(function (a, b) { return sortDir * cmpVals(a[0], b[0]) || a[1] - b[1]; })
      .map(function (x) { return x[2]; });
  }
  var heads = document.querySelectorAll("#trial-table thead th");
  Array.prototype.forEach.call(heads, function (th, i) {
    th.classList.add("sortable");
    th.title = "sort by this column (click again to reverse)";
    th.tabIndex = 0;
    function sortBy() {
      sortDir = sortCol === i ? -sortDir : 1;
      sortCol = i;
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", sortDir > 0 ? "ascending" : "descending");
      apply();
    }
    th.addEventListener("click", sortBy);
    th.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(); }
    });
  });

  Object.keys(sel).forEach(function (k) { sel[k].addEventListener("change", apply); });
  more.addEventListener("click", showMore);
  apply();
})();
