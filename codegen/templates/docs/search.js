// Search for the protocol reference site: filters the methods and types listed in
// search-index.js (window.AGENTWIRE_SEARCH: [name, page, summary] triples) as the reader types.
// Exact and prefix matches of the name first, then names containing the query, then names
// holding its characters in order, then summaries containing it. No network, no storage.
(function () {
  "use strict";
  var input = document.getElementById("search");
  var list = document.getElementById("search-results");
  var entries = window.AGENTWIRE_SEARCH || [];
  if (!input || !list) return;
  input.hidden = false;

  function inOrder(name, query) {
    var at = 0;
    for (var i = 0; i < name.length && at < query.length; i++) {
      if (name[i] === query[at]) at++;
    }
    return at === query.length;
  }

  function rank(entry, query) {
    var name = entry[0].toLowerCase();
    if (name === query) return 0;
    if (name.indexOf(query) === 0) return 1;
    if (name.indexOf(query) > 0) return 2;
    if (inOrder(name, query)) return 3;
    if (entry[2].toLowerCase().indexOf(query) >= 0) return 4;
    return -1;
  }

  function show() {
    var query = input.value.trim().toLowerCase();
    list.textContent = "";
    if (!query) return;
    var found = [];
    for (var i = 0; i < entries.length; i++) {
      var r = rank(entries[i], query);
      if (r >= 0) found.push([r, entries[i]]);
    }
    found.sort(function (a, b) {
      return a[0] - b[0] || a[1][0].length - b[1][0].length || (a[1][0] < b[1][0] ? -1 : 1);
    });
    found.slice(0, 25).forEach(function (hit) {
      var item = document.createElement("li");
      var link = document.createElement("a");
      link.href = hit[1][1];
      var code = document.createElement("code");
      code.textContent = hit[1][0];
      link.appendChild(code);
      item.appendChild(link);
      if (hit[1][2]) item.appendChild(document.createTextNode(" — " + hit[1][2]));
      list.appendChild(item);
    });
    if (!found.length) {
      var none = document.createElement("li");
      none.textContent = "Nothing matches.";
      list.appendChild(none);
    }
  }

  input.addEventListener("input", show);
  show();
})();
