/* The History page (templates/dashboard/history.html): times are rendered by the server in the
   zone the page names (data-zone). Without a tz in the address, the server used the tz cookie,
   else UTC: this sets the cookie to the browser's zone and, when it changed it and the page was
   rendered in another zone, loads the page once more (never twice: the cookie then matches). */
(function () {
  "use strict";
  var shown = document.getElementById("history-zone");
  var zone = "";
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { zone = ""; }
  if (!shown || !/^[A-Za-z0-9_+\-\/]+$/.test(zone)) { return; }
  var wanted = "tz=" + zone;
  if (document.cookie.split("; ").indexOf(wanted) !== -1) { return; }
  document.cookie = wanted + "; path=/; max-age=31536000; SameSite=Lax";
  var explicit = new URLSearchParams(window.location.search).has("tz");
  if (!explicit && shown.dataset.zone !== zone) { window.location.reload(); }
})();
