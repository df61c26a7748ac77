// The explorer's one way to the server: POST /graphql with an operation from the
// page's registry (the files of static/ui/queries). No other endpoint is used.

export const ROOT = document.querySelector('meta[name="cg-root"]').content;
const OPERATIONS = JSON.parse(document.getElementById("cg-queries").textContent);

export class ApiError extends Error {}

// Answers already shown, so that back and forward redraw at once.
const kept = new Map();
const KEPT = 64;

/** The data of one operation: {data, warnings}; throws ApiError with the server's messages. */
export async function gql(name, variables = {}, { signal } = {}) {
  const query = OPERATIONS[name];
  if (!query) throw new ApiError(`the explorer has no operation named ${name}`);
  const body = JSON.stringify({ query, variables, operationName: name });
  const key = body.length < 65536 ? body : null; // not an uploaded lockfile
  if (kept.has(key)) return kept.get(key);
  let response;
  try {
    response = await fetch(`${ROOT}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body,
      signal,
    });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError("the server cannot be reached");
  }
  let answer;
  try {
    answer = await response.json();
  } catch {
    throw new ApiError(`the server answered HTTP ${response.status} without an answer`);
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
