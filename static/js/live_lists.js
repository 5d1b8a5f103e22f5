// The lists that follow the gangs live: the Gangs list and the Timed-out list
// (dashboard/pages/live_lists.py). The page's [data-live-list] is what a reload would show of the
// list, rendered by the server: on every "gangsched:gang" event from live.js (a gang created,
// changed or deleted), every "gangsched:forecast" (a forecast run stored) and each time the socket opens (what changed while the page loaded or
// the socket was down), at most once every REFRESH_MS (refresher.js), the
// page's own address with ?live=rows is read, which answers that part with the same filters,
// sort, page and visibility as the page, and it replaces the list. So a new gang that sorts onto
// this page appears in its place, one that belongs to another page or another filter does not, a
// deleted or no longer matching gang's row goes, and a later page shifts by a row as a reload
// would shift it. Boxes ticked for the bulk actions stay ticked while their gang stays listed.
// [data-live-count] shows the list's count. window.gangschedLists counts the answers (tests).
(function () {
  "use strict";
  var REFRESH_MS = 1000;
  // answers: lists read; refreshes: those that changed the list.
  var lists = (window.gangschedLists = { answers: 0, refreshes: 0, count: null });
  var shown = null;

  function box() {
    return document.querySelector("[data-live-list]");
  }

  function rowsUrl() {
    var params = new URLSearchParams(window.location.search);
    params.set("live", "rows");
    return window.location.pathname + "?" + params.toString();
  }

  // The forms' CSRF tokens are masked afresh each time: they do not make a list different.
  function comparable(html) {
    return html.replace(/name="csrfmiddlewaretoken" value="[^"]*"/g, "");
  }

  function apply(body) {
    var list = box();
    if (!list || typeof body.html !== "string") return;
    lists.answers += 1;
    lists.count = body.count;
    document.querySelectorAll("[data-live-count]").forEach(function (el) { el.textContent = String(body.count); });
    if (shown === null) shown = comparable(list.innerHTML);
    var next = comparable(body.html);
    if (next === shown) return;
    var ticked = {};
    list.querySelectorAll("input[type=checkbox]:checked").forEach(function (input) { ticked[input.value] = true; });
    list.innerHTML = body.html;
    shown = next;
    list.querySelectorAll("input[type=checkbox]").forEach(function (input) {
      if (ticked[input.value]) input.checked = true;
    });
    if (window.gangschedLive) window.gangschedLive.formatTimes(list);
    lists.refreshes += 1;
    document.dispatchEvent(new CustomEvent("gangsched:list", { detail: { count: body.count } }));
  }

  var trigger = window.gangschedRefresher({ ms: REFRESH_MS, url: rowsUrl, apply: apply });

  function onGang() {
    if (box()) trigger();
  }

  document.addEventListener("gangsched:gang", onGang);
  document.addEventListener("gangsched:forecast", onGang);  // the Starts column
  document.addEventListener("gangsched:open", onGang);  // what changed while the page loaded
})();
