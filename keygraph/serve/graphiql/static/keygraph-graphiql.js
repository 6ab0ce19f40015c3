// Starts GraphiQL with the explorer plugin. The page's settings come from its JSON block
// (no inline script, so the page runs under a Content-Security-Policy of 'self').
// Queries and mutations go over HTTP; subscriptions over a WebSocket (graphql-transport-ws,
// with the client graphiql.min.js bundles) to the page's own origin, ws: or wss: as the page,
// its connection_init carrying the headers editor's JSON (the Authorization header).
(function () {
  "use strict";
  var config = JSON.parse(document.getElementById("graphiql-config").textContent);
  var params = new URLSearchParams(window.location.search);
  var socketScheme = window.location.protocol === "https:" ? "wss://" : "ws://";
  var fetcher = GraphiQL.createFetcher({
    url: config.endpoint,
    subscriptionUrl: socketScheme + window.location.host + config.endpoint,
  });
  var explorer = GraphiQLPluginExplorer.explorerPlugin();

  function App() {
    return React.createElement(GraphiQL, {
      fetcher: fetcher,
      plugins: [explorer],
      defaultQuery: config.defaultQuery,
      query: params.get("query") || undefined,
      variables: params.get("variables") || undefined,
      headers: config.headers || undefined,
      defaultEditorToolsVisibility: config.headers ? "headers" : false,
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: true,
      inputValueDeprecation: true,
    });
  }

  ReactDOM.createRoot(document.getElementById("graphiql")).render(React.createElement(App));
})();
