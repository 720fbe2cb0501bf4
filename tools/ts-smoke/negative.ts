// Must NOT compile. Each line marked `// expect-error` is a mistake the generated types have to
// catch; tools/check-ts.sh requires an error on every marked line and on no other line. If the
// generated types were `any` (or too loose), the marked lines would compile and the check fails.
import type { ClientRequest, ClientRequestResponses, RequestId, ServerNotification } from "@agentwire/protocol";

export function assertNever(value: never): never {
  throw new Error(`unhandled variant: ${JSON.stringify(value)}`);
}

// 1. wrong params type for thread/start (the wire rejects `"cwd": 42` with -32600)
export const badCwd: ClientRequest = { method: "thread/start", id: 1, params: { cwd: 42 } }; // expect-error

// 2. a method the protocol does not have
export const unknownMethod: ClientRequest = { method: "does/notExist", id: 2, params: {} }; // expect-error

// 3. a request without params (the wire rejects it: missing field `params`)
export const noParams: ClientRequest = { method: "thread/start", id: 3 }; // expect-error

// 4. a request id that is neither a string nor a number
export const badId: RequestId = true; // expect-error

// 5. params of the wrong notification after narrowing
export function wrongField(notification: ServerNotification): string {
  if (notification.method === "turn/completed") {
    return notification.params.delta; // expect-error
  }
  return "";
}

// 6. a turn status is not an arbitrary string
export function wrongStatus(notification: ServerNotification): boolean {
  if (notification.method === "turn/completed") {
    return notification.params.turn.status === "no-such-status"; // expect-error
  }
  return false;
}

// 7. an exhaustive switch that forgets a handled case
type Handled = Extract<ServerNotification, { method: "item/agentMessage/delta" | "turn/completed" }>;
export function forgotCase(notification: Handled): string {
  switch (notification.method) {
    case "item/agentMessage/delta":
      return notification.params.delta;
    default:
      return assertNever(notification); // expect-error
  }
}

// 8. the response map gives each method its own result type
export function wrongResult(result: ClientRequestResponses["thread/start"]): string {
  return result.delta; // expect-error
}

// 9. a method that is not in the response map
export type NoSuchResult = ClientRequestResponses["does/notExist"]; // expect-error
