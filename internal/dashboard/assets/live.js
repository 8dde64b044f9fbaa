// wirespeed dashboard: live updates, the age of the newest result and
// the cell details bar. No inline script: the page's CSP forbids it.
// Every string shown here comes from the server's escaped HTML or is
// set with textContent.
"use strict";
(function () {
  var body = document.body;
  document.documentElement.dataset.live = "on";
  var poll = parseInt(body.dataset.poll, 10) || 5000;
  var results = body.dataset.results;
  var age = document.getElementById("age");
  var tip = document.getElementById("tip");

  function newest() {
    var t = document.querySelector("table.grid");
    var s = (t && t.dataset.newest) || (age && age.dataset.newest);
    return s ? new Date(s) : null;
  }
  function say(ms) {
    var s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return s + " s ago";
    if (s < 3600) return Math.floor(s / 60) + " min ago";
    if (s < 172800) return (s / 3600).toFixed(1) + " h ago";
    return Math.floor(s / 86400) + " days ago";
  }
  function tick() {
    var n = newest();
    if (!age) return;
    age.textContent = n ? "newest result " + say(Date.now() - n.getTime()) : "no results yet";
    age.classList.toggle("stale", !!n && Date.now() - n.getTime() > 3 * 3600 * 1000);
  }
  function refresh() {
    var grid = document.getElementById("grid");
    if (!grid) {
      location.reload();
      return;
    }
    var q = new URLSearchParams();
    if (grid.dataset.test) q.set("test", grid.dataset.test);
    if (grid.dataset.range) q.set("range", grid.dataset.range);
    fetch("/grid?" + q.toString(), { credentials: "same-origin" })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var t = doc.querySelector("table.grid");
        if (t) {
          grid.replaceChildren(document.importNode(t, true));
          results = t.dataset.results;
          body.dataset.results = results;
          tick();
        }
      })
      .catch(function () {});
  }
  function check() {
    fetch("/state.json", { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (s) {
        if (String(s.results) !== String(results)) refresh();
      })
      .catch(function () {})
      .finally(function () { setTimeout(check, poll); });
  }
  function show(e) {
    var a = e.target.closest && e.target.closest("a.half");
    if (a && tip) tip.textContent = a.title;
  }
  document.addEventListener("mouseover", show);
  document.addEventListener("focusin", show);
  tick();
  setInterval(tick, 1000);
  setTimeout(check, poll);
})();
