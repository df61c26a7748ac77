// The explorer's one way to the server: /graphql with an operation from the page's
// registry (the files of static/ui/queries). No other endpoint is used.
//
// Each operation goes by its SHA-256 (a persisted query: the server knows the
// explorer's documents), over GET while the URL is short, so that the browser and
// any proxy keep the answer and revalidate it with its ETag; an uploaded lockfile,
// too long for a URL, goes by POST. A server that does not know the hash answers
// PersistedQueryNotFound, and gets the text once (Apollo's protocol).

export const ROOT = document.querySelector('meta[name="cg-root"]').content;
const OPERATIONS = JSON.parse(document.getElementById("cg-queries").textContent);
const HASHES = JSON.parse(document.getElementById("cg-hashes").textContent);
// nginx's default request line limit is 8 kB
const GET_URL_BYTES = 6000;

export class ApiError extends Error {}

// Answers already shown, so that back and forward redraw at once.
const kept = new Map();
const KEPT = 64;

/** The data of one operation: {data, warnings}; throws ApiError with the server's messages.
 * ``fresh``: asked of the server each time (revalidated, never an answer kept for max-age), for
 * what changes between reloads of the data (a remote mirror's last check). */
export async function gql(name, variables = {}, { signal, fresh = false } = {}) {
  const query = OPERATIONS[name];
  if (!query) throw new ApiError(`the explorer has no operation named ${name}`);
  const extensions = { persistedQuery: { version: 1, sha256Hash: HASHES[name] } };
  const given = JSON.stringify(variables);
  const key = given.length < 65536 ? `${name} ${given}` : null; // not an uploaded lockfile
  if (!fresh && kept.has(key)) return kept.get(key);
  const params = new URLSearchParams({
    operationName: name,
    variables: given,
    extensions: JSON.stringify(extensions),
  });
  const url = `${ROOT}/graphql?${params}`;
  const operation = { variables, operationName: name, extensions };
  let [response, answer] =
    url.length <= GET_URL_BYTES
      ? await send(url, {
          method: "GET",
          headers: { accept: "application/json" },
          // no-cache: the browser revalidates its copy (a 304 when nothing changed)
          cache: fresh ? "no-cache" : "default",
          signal,
        })
      : await send(`${ROOT}/graphql`, post(operation, signal));
  if (answer.errors?.[0]?.message === "PersistedQueryNotFound") {
    [response, answer] = await send(`${ROOT}/graphql`, post({ ...operation, query }, signal));
  }
  if (answer.errors?.length) {
    throw new ApiError(answer.errors.map((e) => e.message).join("\n"));
  }
  if (!response.ok || !answer.data) throw new ApiError(`the server answered HTTP ${response.status}`);
  const found = { data: answer.data, warnings: answer.extensions?.warnings ?? [] };
  if (key !== null) kept.set(key, found);
  if (kept.size > KEPT) kept.delete(kept.keys().next().value);
  return found;
}

function post(operation, signal) {
  return {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(operation),
    signal,
  };
}

/** [response, its JSON]; ApiError when the server cannot be reached or sends no JSON. */
async function send(url, options) {
  let response;
  try {
    response = await fetch(url, options);
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError("the server cannot be reached");
  }
  try {
    return [response, await response.json()];
  } catch {
    throw new ApiError(`the server answered HTTP ${response.status} without an answer`);
  }
}

/** The URL of an explorer path ("/ui/spec/abc"), under the server's root path. */
export function href(path, params = {}) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    for (const one of [].concat(value ?? [])) if (one !== "" && one !== null) query.append(key, one);
  }
  const text = queryString(query);
  return ROOT + path + (text ? "?" + text : "");
}

/** URLSearchParams as a query string with spaces as %20, never "+": so a "+" in an address
 * is always a plus someone typed (`?q=hdf5+mpi`, a variant), as `params()` reads it. */
export function queryString(query) {
  return query.toString().replaceAll("+", "%20");
}

/** The parameters of an address, a "+" kept as a plus (see queryString). */
export function params(search = location.search) {
  return new URLSearchParams(search.replaceAll("+", "%2B"));
}
