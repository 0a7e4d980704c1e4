// The fault suites' HTTP calls to the built processes (the API, the simulator's control endpoints): JSON in, the
// status, the parsed JSON and the headers out.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's JSON, read by assertions as supertest's bodies are.
export type Json = any;

export async function call(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}
