// What a third-party client writes against the generated TypeScript. Must compile under
// tools/ts-smoke/tsconfig.json (strict). tools/check-ts.sh runs it; negative.ts is its mirror
// image that must not compile.
import type {
  AgentMessageDeltaNotification,
  ClientRequest,
  ClientRequestResponses,
  RequestId,
  ServerNotification,
  ThreadStartParams,
  ThreadStartResponse,
  Turn,
  TurnCompletedNotification,
  TurnStatus,
} from "@agentwire/protocol";

// ---- type-level assertions: these fail to compile if a type is `any`, `unknown` or widened ----

/** true when A and B are the same type (and neither is `any` unless both are). */
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type IsAny<T> = 0 extends 1 & T ? true : false;

export const requestIdIsStringOrNumber: Equals<RequestId, string | number> = true;
export const deltaIsString: Equals<AgentMessageDeltaNotification["delta"], string> = true;
export const turnIsTyped: Equals<TurnCompletedNotification["turn"], Turn> = true;
export const turnIsNotAny: IsAny<Turn> = false;
export const turnStatusIsNotAny: IsAny<TurnStatus> = false;
// The `method` members are literal unions, not `string`: that is what makes narrowing work.
export const clientMethodsAreLiterals: string extends ClientRequest["method"] ? false : true = true;
export const serverMethodsAreLiterals: string extends ServerNotification["method"] ? false : true = true;
export const hasThreadStart: "thread/start" extends ClientRequest["method"] ? true : false = true;
export const hasDelta: "item/agentMessage/delta" extends ServerNotification["method"] ? true : false = true;
export const hasTurnCompleted: "turn/completed" extends ServerNotification["method"] ? true : false = true;
// Every client request has exactly one entry in the response map, and nothing else does.
export const responseMapIsComplete: Equals<keyof ClientRequestResponses, ClientRequest["method"]> = true;
export const threadStartAnswer: Equals<ClientRequestResponses["thread/start"], ThreadStartResponse> = true;

// ---- building requests ----------------------------------------------------------------------

export function assertNever(value: never): never {
  throw new Error(`unhandled variant: ${JSON.stringify(value)}`);
}

let nextId = 0;
export function newId(): RequestId {
  nextId += 1;
  return nextId;
}

const startParams: ThreadStartParams = { cwd: "/tmp" };
export const threadStart: ClientRequest = { method: "thread/start", id: newId(), params: startParams };
export const threadStartInline: ClientRequest = { method: "thread/start", id: "req-2", params: { cwd: "/tmp" } };
export const threadStartNulls: ClientRequest = { method: "thread/start", id: 3, params: { cwd: null, model: null } };
export const threadStartEmpty: ClientRequest = { method: "thread/start", id: 4, params: {} };

/** Narrowing a ClientRequest by method gives the params type of that method. */
export function cwdOf(request: ClientRequest): string | null | undefined {
  if (request.method === "thread/start") {
    const params: ThreadStartParams = request.params;
    return params.cwd;
  }
  return undefined;
}

export function encode(request: ClientRequest): string {
  return JSON.stringify(request);
}

// ---- a typed request/response helper, the way a client library wraps the transport ----------

export type Method = ClientRequest["method"];
export type RequestOf<M extends Method> = Extract<ClientRequest, { method: M }>;
/** The params of a method; `undefined` for the methods that take none (they have no `params`). */
export type ParamsOf<M extends Method> = RequestOf<M> extends { params: infer P } ? P : undefined;
export type Send = (request: ClientRequest) => Promise<unknown>;

export async function call<M extends Method>(send: Send, method: M, params: ParamsOf<M>): Promise<ClientRequestResponses[M]> {
  const request = { method, id: newId(), params } as unknown as RequestOf<M>;
  return (await send(request)) as ClientRequestResponses[M];
}

export async function startThread(send: Send): Promise<string> {
  const started = await call(send, "thread/start", { cwd: "/tmp" });
  const typed: Equals<typeof started, ThreadStartResponse> = true;
  return typed ? started.thread.id : "";
}

// ---- consuming notifications ----------------------------------------------------------------

export interface TurnView {
  text: string;
  status: TurnStatus | "open";
  items: number;
}

/** Folds the server's notification stream into a view, narrowing each message by `method`. */
export function apply(view: TurnView, notification: ServerNotification): TurnView {
  switch (notification.method) {
    case "item/agentMessage/delta": {
      const delta: string = notification.params.delta;
      const itemId: string = notification.params.itemId;
      return { ...view, text: view.text + delta + (itemId.length > 0 ? "" : "") };
    }
    case "turn/completed": {
      const turn: Turn = notification.params.turn;
      const status: TurnStatus = turn.status;
      return { ...view, status, items: turn.items.length };
    }
    default:
      // Every other notification is ignored by this client; its method is still a known literal.
      return view;
  }
}

type Handled = Extract<ServerNotification, { method: "item/agentMessage/delta" | "turn/completed" }>;

/** Exhaustive over the subset this client handles: adding a case without code fails to compile. */
export function summarize(notification: Handled): string {
  switch (notification.method) {
    case "item/agentMessage/delta":
      return `delta ${notification.params.turnId}/${notification.params.itemId}: ${notification.params.delta}`;
    case "turn/completed":
      return `turn ${notification.params.turn.id} of ${notification.params.threadId}: ${notification.params.turn.status}`;
    default:
      return assertNever(notification);
  }
}

/** A JSON line from the wire, trusted to be a notification (a real client validates it first). */
export function parseNotification(line: string): ServerNotification {
  return JSON.parse(line) as ServerNotification;
}

export const demo: TurnView = [
  '{"method":"item/agentMessage/delta","params":{"threadId":"t","turnId":"u","itemId":"m","delta":"Hello"}}',
].map(parseNotification).reduce(apply, { text: "", status: "open", items: 0 });
