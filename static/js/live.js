/* Live updates for every dashboard page (plain JS, no libraries).
 *
 * Connects to ws(s)://<host>/ws/gangs/ (session cookie: the consumer forwards only events of
 * gangs this user may see). An event says "this gang changed": the gang is re-read from
 * /api/v1/gangs/<ns>/<name>/ and every element carrying data-gang="<ns>/<name>" is updated:
 *   .progress[data-gang]     data-bound/-reserved/-min/-total, .progress-bar width (bound/min),
 *                            .progress-reserved width and .progress-label text when present
 *   .gang-state[data-gang]   the badge: text, CSS class and data-state, from the mapping the
 *                            server renders as JSON (#gang-state-badges, dashboard/templatetags/
 *                            badges.py: the one the templates use), so its colour follows its text
 *   #event-feed              a line per event, newest first (at most FEED_MAX lines), as the
 *                            server renders its lines
 * Each update is also announced as a "gangsched:gang" DOM event on document
 * (detail: {event, gang}) for the page's own scripts (charts, queues, live lists). A gang's
 * deletion ({"type": "gang.deleted", "gang": key}, sent only to those who could see it) is
 * announced the same way with gang null, and as "gangsched:gang-deleted" (detail: {gang: key}).
 * A forecast run stored ({"type": "forecast.updated", "madeAt", "gangs": the keys of the gangs
 * this user sees whose forecast changed}) is announced as "gangsched:forecast" (detail: {gangs,
 * madeAt}): the lists, the gang page and the Queues page read their forecasts again.
 *
 * Times: every <time datetime="..."> is shown by one formatter, in the viewer's time zone:
 * HH:MM:SS (24-hour) for today, YYYY-MM-DD HH:MM:SS otherwise; one marked data-ago keeps its
 * words ("3 minutes ago") and shows that time on hover. window.gangschedLive.formatTimes(root)
 * formats what a script adds.
 * Each time the socket opens, "gangsched:open" (detail: {reconnected}) is fired.
 * When the socket closes, #live-status says so, the socket reconnects with backoff and, once
 * back, every gang shown on the page is re-read (catch-up) and the banner hides. Close code 4401
 * (not signed in) stops reconnecting.
 */
(function () {
  "use strict";

  var FEED_MAX = 50;
  var REASON_MAX = 160;  // the server's truncatechars:160
  var BACKOFF_MIN_MS = 500;
  var BACKOFF_MAX_MS = 10000;
  var CATCH_UP_CONCURRENCY = 4;

  var socket = null;
  var backoff = BACKOFF_MIN_MS;
  var everConnected = false;
  var stopped = false;
  var inFlight = {};   // gang key -> true while its fetch runs
  var again = {};      // gang key -> true when another event came during that fetch

  var live = (window.gangschedLive = {
    state: "connecting",  // "open", "reconnecting", "stopped"; tests and benchmarks read it
    events: 0,
    deletions: 0,
    forecasts: 0,
    lastForecast: null,
    lastEvent: null,
    refreshGang: refreshGang,
    applyBadge: applyBadge,
    formatTime: formatTime,
    formatTimes: formatTimes,
  });

  // ---- one badge mapping, one time format

  function badgeFor(state) {
    var source = document.getElementById("gang-state-badges");
    var badges = {};
    if (source) {
      try {
        badges = JSON.parse(source.textContent);
      } catch (err) {
        badges = {};
      }
    }
    return badges[state] || { text: state, "class": "gang-state" };
  }

  function applyBadge(el, state) {
    var badge = badgeFor(state);
    el.textContent = badge.text;
    el.className = badge["class"];
    el.setAttribute("data-state", state);
  }

  function two(n) {
    return (n < 10 ? "0" : "") + n;
  }

  function formatTime(date, now) {
    now = now || new Date();
    var clock = two(date.getHours()) + ":" + two(date.getMinutes()) + ":" + two(date.getSeconds());
    if (date.toDateString() === now.toDateString()) return clock;
    return date.getFullYear() + "-" + two(date.getMonth() + 1) + "-" + two(date.getDate()) + " " + clock;
  }

  function formatTimes(root) {
    var all = (root || document).querySelectorAll("time[datetime]");
    var now = new Date();
    for (var i = 0; i < all.length; i++) {
      var when = new Date(all[i].getAttribute("datetime"));
      if (isNaN(when.getTime())) continue;
      var shown = formatTime(when, now);
      if (all[i].hasAttribute("data-ago")) all[i].setAttribute("title", shown);
      else all[i].textContent = shown;
    }
  }

  function statusBanner(text) {
    var el = document.getElementById("live-status");
    if (!el) return;
    if (text) {
      el.textContent = text;
      el.hidden = false;
      el.setAttribute("role", "status");
    } else {
      el.hidden = true;
    }
  }

  function socketUrl() {
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    return scheme + window.location.host + "/ws/gangs/";
  }

  function connect() {
    if (stopped) return;
    try {
      socket = new WebSocket(socketUrl());
    } catch (err) {
      scheduleReconnect();
      return;
    }
    socket.onopen = function () {
      var reconnected = everConnected;
      everConnected = true;
      backoff = BACKOFF_MIN_MS;
      live.state = "open";
      statusBanner("");
      document.documentElement.setAttribute("data-live", "open");
      // Events sent while the page was loading or the socket was down are gone: re-read.
      catchUp(reconnected);
      document.dispatchEvent(new CustomEvent("gangsched:open", { detail: { reconnected: reconnected } }));
    };
    socket.onmessage = function (message) {
      var event;
      try {
        event = JSON.parse(message.data);
      } catch (err) {
        return;
      }
      if (event && event.type === "gang.event" && typeof event.gang === "string") {
        live.events += 1;
        live.lastEvent = event;
        prependFeed(event);
        refreshGang(event.gang, event);
      } else if (event && event.type === "forecast.updated" && Array.isArray(event.gangs)) {
        live.forecasts += 1;
        live.lastForecast = event;
        document.dispatchEvent(new CustomEvent("gangsched:forecast", { detail: { gangs: event.gangs, madeAt: event.madeAt } }));
      } else if (event && event.type === "gang.deleted" && typeof event.gang === "string") {
        live.deletions += 1;
        live.lastEvent = event;
        document.dispatchEvent(new CustomEvent("gangsched:gang-deleted", { detail: { gang: event.gang } }));
        document.dispatchEvent(new CustomEvent("gangsched:gang", { detail: { event: event, gang: null } }));
      }
    };
    socket.onclose = function (close) {
      socket = null;
      document.documentElement.setAttribute("data-live", "closed");
      if (close.code === 4401) {
        stopped = true;
        live.state = "stopped";
        statusBanner("Live updates stopped: you are signed out. Reload the page to sign in.");
        return;
      }
      live.state = "reconnecting";
      statusBanner("Live updates lost, reconnecting\u2026");
      scheduleReconnect();
    };
  }

  function scheduleReconnect() {
    if (stopped) return;
    var delay = backoff * (0.75 + Math.random() * 0.5);
    backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    window.setTimeout(connect, delay);
  }

  function gangUrl(key) {
    var parts = key.split("/");
    return "/api/v1/gangs/" + encodeURIComponent(parts[0]) + "/" + encodeURIComponent(parts[1]) + "/";
  }

  function elementsOf(key, selector) {
    var all = document.querySelectorAll(selector + "[data-gang]");
    var found = [];
    for (var i = 0; i < all.length; i++) {
      if (all[i].getAttribute("data-gang") === key) found.push(all[i]);
    }
    return found;
  }

  function pct(part, whole) {
    return Math.min(100, Math.round((100 * part) / Math.max(whole, 1)));
  }

  function applyGang(key, gang) {
    var progress = gang.progress || {};
    var bound = progress.bound || 0;
    var reserved = progress.reserved || 0;
    var min = progress.minMember || gang.minMember || 1;
    var total = progress.members != null ? progress.members : gang.totalNumber || min;
    var boundPct = pct(bound, min);
    var reservedPct = Math.min(100 - boundPct, pct(reserved, min));
    elementsOf(key, ".progress").forEach(function (bar) {
      bar.setAttribute("data-bound", bound);
      bar.setAttribute("data-reserved", reserved);
      bar.setAttribute("data-min", min);
      bar.setAttribute("data-total", total);
      bar.setAttribute("title", bound + " bound, " + reserved + " reserved (room held, not bound yet) of " + min + " needed (" + total + " members)");
      var fill = bar.querySelector(".progress-bar");
      if (fill) fill.style.width = boundPct + "%";
      var held = bar.querySelector(".progress-reserved");
      if (held) held.style.width = reservedPct + "%";
      var label = bar.querySelector(".progress-label");
      // As dashboard/pages/selectors.py's progress_label: never "6/4" for a gang beyond its quorum.
      if (label) label.textContent = (total > min ? bound + "/" + total + " (min " + min + ")" : bound + "/" + min) + (reserved ? " +" + reserved + "r" : "");
    });
    elementsOf(key, ".gang-state").forEach(function (cell) {
      applyBadge(cell, gang.state || gang.phase);
    });
    applyActions(key, gang.state || gang.phase);
  }

  // The gang page's Retry and Kill follow the state as the server renders them: Retry only
  // for TimedOut or Failed gangs, Kill for any gang not Finished or Killed.
  function applyActions(key, state) {
    var form = document.querySelector('.actions form input[name="gang"][value="' + key + '"]');
    if (!form) return;
    form = form.form;
    var retry = form.querySelector('button[value="retry"]');
    var kill = form.querySelector('button[value="kill"]');
    if (retry) retry.disabled = ["TimedOut", "Failed"].indexOf(state) < 0;
    if (kill) kill.disabled = ["Finished", "Killed"].indexOf(state) >= 0;
  }

  function refreshGang(key, event) {
    if (inFlight[key]) {
      again[key] = true;  // one fetch per gang at a time; the latest state wins
      return Promise.resolve();
    }
    inFlight[key] = true;
    return fetch(gangUrl(key), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        return response.ok ? response.json() : null;
      })
      .then(function (gang) {
        if (gang) {
          applyGang(key, gang);
          document.dispatchEvent(new CustomEvent("gangsched:gang", { detail: { event: event || null, gang: gang } }));
        }
      })
      .catch(function () {})
      .then(function () {
        delete inFlight[key];
        if (again[key]) {
          delete again[key];
          return refreshGang(key, null);
        }
      });
  }

  function shownGangs() {
    var seen = {};
    var keys = [];
    var all = document.querySelectorAll(".progress[data-gang], .gang-state[data-gang]");
    for (var i = 0; i < all.length; i++) {
      var key = all[i].getAttribute("data-gang");
      if (key && key.indexOf("/") > 0 && !seen[key]) {
        seen[key] = true;
        keys.push(key);
      }
    }
    return keys;
  }

  function catchUp(reconnected) {
    var keys = shownGangs();
    var next = 0;
    function worker() {
      if (next >= keys.length) return Promise.resolve();
      var key = keys[next++];
      return refreshGang(key, null).then(worker);
    }
    var workers = [];
    for (var i = 0; i < CATCH_UP_CONCURRENCY; i++) workers.push(worker());
    return Promise.all(workers).then(function () {
      if (reconnected) document.dispatchEvent(new CustomEvent("gangsched:caught-up", { detail: { gangs: keys } }));
    });
  }

  // As overview.html renders a line: <time> <a>key</a> <span class="kind kind-X">X</span> reason
  function prependFeed(event) {
    var feed = document.getElementById("event-feed");
    if (!feed) return;
    var kind = event.kind || "";
    var item = document.createElement("li");
    item.setAttribute("data-gang", event.gang);
    item.setAttribute("data-kind", kind);
    var time = document.createElement("time");
    var created = event.created ? new Date(event.created) : new Date();
    if (isNaN(created.getTime())) created = new Date();
    time.setAttribute("datetime", created.toISOString());
    time.textContent = formatTime(created);
    var link = document.createElement("a");
    link.href = "/gangs/" + event.gang.split("/").map(encodeURIComponent).join("/") + "/";
    link.textContent = event.gang;
    var badge = document.createElement("span");
    badge.className = "kind kind-" + kind;
    badge.textContent = kind;
    var reason = event.reason || "";
    if (reason.length > REASON_MAX) reason = reason.slice(0, REASON_MAX - 1) + "\u2026";
    item.appendChild(time);
    item.appendChild(document.createTextNode(" "));
    item.appendChild(link);
    item.appendChild(document.createTextNode(" "));
    item.appendChild(badge);
    item.appendChild(document.createTextNode(" " + reason));
    var empty = feed.querySelector("li.empty");
    if (empty) feed.removeChild(empty);
    feed.insertBefore(item, feed.firstChild);
    while (feed.children.length > FEED_MAX) feed.removeChild(feed.lastChild);
  }

  window.addEventListener("beforeunload", function () {
    stopped = true;
    if (socket) socket.close(1000);
  });

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { formatTimes(document); });
  } else {
    formatTimes(document);
  }
  connect();
})();
