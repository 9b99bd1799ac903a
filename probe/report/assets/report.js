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
    correct: document.getElementById("f-correct")
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

  function row(r) {
    var tr = el("tr", "row");
    tr.dataset.id = r.id;
    var cells = [
      [data.models[r.m]], [data.templates[r.t]], [data.variants[r.v]], [r.i, "num"], [r.l || ""], [r.st, "num"],
      [outcome(r.c), outcome(r.c)], [r.x || "—"], [r.e], [r.r], [r.n, "num"], [r.c === -1 ? "" : r.h.toFixed(3), "num"]
    ];
    cells.forEach(function (c) { tr.appendChild(el("td", c[1] || "", String(c[0]))); });
    tr.addEventListener("click", function () { toggle(tr, r); });
    return tr;
  }

  function detail(r) {
    var td = el("td");
    td.colSpan = 12;
    td.appendChild(el("h4", "", "Prompt"));
    if (r.p >= 0) {
      if (data.prefix) {
        var d = el("details");
        d.appendChild(el("summary", "", "instruction and worked examples shared by every prompt (" + data.prefix.length + " characters)"));
        d.appendChild(el("pre", "", data.prefix));
        td.appendChild(d);
      }
      td.appendChild(el("pre", "", data.prompts[r.p]));
    } else {
      td.appendChild(el("pre", "", r.q || ""));
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
    pre.appendChild(document.createTextNode(parts[0]));
    if (parts[1]) pre.appendChild(el("mark", "answer", parts[1]));
    pre.appendChild(document.createTextNode(parts[2]));
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
        var s = el("span", "tok", r.k[i]);
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
    var m = sel.model.value, v = sel.variant.value, t = sel.template.value, c = sel.correct.value;
    matches = data.rows.filter(function (r) {
      return (m === "" || r.m === +m) && (v === "" || r.v === +v) && (t === "" || r.t === +t) && (c === "" || r.c === +c);
    });
    body.textContent = "";
    shown = 0;
    showMore();
  }

  Object.keys(sel).forEach(function (k) { sel[k].addEventListener("change", apply); });
  more.addEventListener("click", showMore);
  apply();
})();
