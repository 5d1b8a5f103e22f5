/* Live updates for every dashboard page (plain JS, no libraries).
 *
 * Connects to ws(s)://<host>/ws/gangs/ (session cookie: the consumer forwards only events of
 * gangs this user may see). An event says "this gang changed": the gang is re-read from
 * /api/v1/gangs/<ns>/<name>/ and every element carrying data-gang="<ns>/<name>" is updated:
 *   .progress[data-gang]     data-bound/-reserved/-min/-total, .progress-bar width (bound/min),
 *                            .progress-reserved width and .progress-label text when present
 *   .gang-state[data-gang]   the state text (and data-state)
 *   #event-feed              a line per event, newest first (at most FEED_MAX lines)
 * Each update is also announced as a "gangsched:gang" DOM event on document
 * (detail: {event, gang}) for the page's own scripts (charts).
 * When the socket closes, #live-status says so, the socket reconnects with backoff and, once
 * back, every gang shown on the page is re-read (catch-up) and the banner hides. Close code 4401
 * (not signed in) stops reconnecting.
 */
(function () {
  "use strict";

  var FEED_MAX = 50;
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
    lastEvent: null,
    refreshGang: refreshGang,
  });

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
      if (label) label.textContent = bound + "/" + min + (reserved ? " +" + reserved + "r" : "");
    });
    elementsOf(key, ".gang-state").forEach(function (cell) {
      cell.textContent = gang.state || gang.phase;
      cell.setAttribute("data-state", gang.state || gang.phase);
    });
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

  function prependFeed(event) {
    var feed = document.getElementById("event-feed");
    if (!feed) return;
    var item = document.createElement("li");
    item.setAttribute("data-gang", event.gang);
    item.setAttribute("data-kind", event.kind || "");
    item.className = "event event-" + (event.kind || "unknown");
    var time = document.createElement("time");
    time.setAttribute("datetime", event.created || "");
    var created = event.created ? new Date(event.created) : new Date();
    time.textContent = isNaN(created.getTime()) ? "" : created.toLocaleTimeString();
    var link = document.createElement("a");
    link.href = "/gangs/" + event.gang.split("/").map(encodeURIComponent).join("/") + "/";
    link.textContent = event.gang;
    item.appendChild(time);
    item.appendChild(document.createTextNode(" "));
    item.appendChild(link);
    item.appendChild(document.createTextNode(" " + (event.kind || "") + (event.reason ? ": " + event.reason : "")));
    var empty = feed.querySelector("li.empty");
    if (empty) feed.removeChild(empty);
    feed.insertBefore(item, feed.firstChild);
    while (feed.children.length > FEED_MAX) feed.removeChild(feed.lastChild);
  }

  window.addEventListener("beforeunload", function () {
    stopped = true;
    if (socket) socket.close(1000);
  });

  connect();
})();
