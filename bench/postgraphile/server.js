// PostGraphile as a careful user would run it for production reads: the
// connection-filter plugin (with relation filters), no GraphiQL, no query log.
const http = require("http");
const { postgraphile } = require("postgraphile");
const ConnectionFilterPlugin = require("postgraphile-plugin-connection-filter");

const [databaseUrl, port] = process.argv.slice(2);
const middleware = postgraphile(databaseUrl, "public", {
  appendPlugins: [ConnectionFilterPlugin],
  graphileBuildOptions: { connectionFilterRelations: true },
  disableQueryLog: true,
  graphiql: false,
  enhanceGraphiql: false,
  dynamicJson: true,
  retryOnInitFail: false,
});
http.createServer(middleware).listen(Number(port), "127.0.0.1");
