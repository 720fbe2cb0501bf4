//! Drives `agentwire-client` against a server that is not agentwire: `@open-rpc/mock-server`
//! serving our OpenRPC document over a WebSocket (`tools/openrpc/mock-client.mjs` starts it and
//! runs this example; see docs/openrpc.md).
//!
//! ```text
//! openrpc_mock --url ws://127.0.0.1:PORT --document agentwire_app_server_protocol.openrpc.json
//! ```
//!
//! 1. Connects with the client's `ws://` transport. The handshake's `initialize` sends the
//!    `clientInfo` of the document's `initialize` example, so the mock answers with that
//!    example's recorded result; the typed answer must equal the recorded one.
//! 2. For every method of the document with examples, sends each example's params as the
//!    method's typed params (`client.request::<M>`) and parses the result into `M::Response`.
//!    The mock answers with the recorded result when the params match the example by position,
//!    otherwise with data it makes up from the result schema; either must parse. A recorded
//!    result of an example without params must come back equal to the recorded value.
//! 3. `thread/list` with `limit: "ten"` must be refused with -32602 by the mock's validation.
//!
//! Exits 1, naming the method, when any result does not parse or differs.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;

use agentwire_client::{Client, ClientOptions, Error, error_codes};
use agentwire_protocol::method::{Method, MethodVisitor, Notification, Request};
use agentwire_protocol::methods::{Initialize, visit_methods};
use agentwire_protocol::{ClientInfo, InitializeResponse};
use serde_json::{Map, Value};

type Answer<'a> = Pin<Box<dyn Future<Output = Result<Value, String>> + 'a>>;
/// Sends one typed request: params (JSON) -> `M::Params` -> request -> `M::Response` -> JSON.
type Call = for<'a> fn(&'a Client, Value) -> Answer<'a>;

fn call<M: Request>(client: &Client, params: Value) -> Answer<'_> {
    Box::pin(async move {
        let params: M::Params = serde_json::from_value(params)
            .map_err(|e| format!("the example's params are not {}'s params: {e}", M::NAME))?;
        let response = client
            .request::<M>(params)
            .await
            .map_err(|e| e.to_string())?;
        serde_json::to_value(&response).map_err(|e| format!("{}: cannot re-encode: {e}", M::NAME))
    })
}

/// The typed call of every client request of the method table, by wire name.
#[derive(Default)]
struct Calls(BTreeMap<&'static str, Call>);

impl MethodVisitor for Calls {
    fn client_request<M: Request>(&mut self) {
        self.0.insert(M::NAME, call::<M>);
    }
    fn server_request<M: Request>(&mut self) {}
    fn server_notification<M: Notification>(&mut self) {}
    fn client_notification<M: Notification>(&mut self) {}
}

/// `M::Response` of a JSON value, re-encoded: two answers are the same when these are equal.
fn typed<M: Request>(value: Value) -> Result<Value, String> {
    let response: M::Response = serde_json::from_value(value)
        .map_err(|e| format!("{}: the recorded result does not parse: {e}", M::NAME))?;
    serde_json::to_value(&response).map_err(|e| format!("{}: cannot re-encode: {e}", M::NAME))
}

/// An example's by-name params as one params object.
fn params_object(example: &Value) -> Value {
    let mut object = Map::new();
    for param in example["params"].as_array().into_iter().flatten() {
        if let Some(name) = param["name"].as_str() {
            object.insert(name.to_owned(), param["value"].clone());
        }
    }
    Value::Object(object)
}

struct Args {
    url: String,
    document: String,
}

fn args() -> Result<Args, String> {
    let mut url = None;
    let mut document = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--url" => url = args.next(),
            "--document" => document = args.next(),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    match (url, document) {
        (Some(url), Some(document)) => Ok(Args { url, document }),
        _ => Err("usage: openrpc_mock --url ws://HOST:PORT --document FILE".to_owned()),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match run().await {
        Ok(checked) => {
            println!("ok   {checked} typed answers from the mock server parsed");
            ExitCode::SUCCESS
        }
        Err(failures) => {
            for failure in &failures {
                eprintln!("FAIL {failure}");
            }
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<usize, Vec<String>> {
    let args = args().map_err(|e| vec![e])?;
    let text = std::fs::read_to_string(&args.document)
        .map_err(|e| vec![format!("cannot read {}: {e}", args.document)])?;
    let document: Value = serde_json::from_str(&text)
        .map_err(|e| vec![format!("{} is not JSON: {e}", args.document)])?;
    let methods = document["methods"]
        .as_array()
        .ok_or_else(|| vec![format!("{}: no `methods` array", args.document)])?;
    let examples_of = |name: &str| -> Vec<Value> {
        methods
            .iter()
            .find(|m| m["name"] == name)
            .and_then(|m| m["examples"].as_array())
            .cloned()
            .unwrap_or_default()
    };

    // 1. The handshake, with the clientInfo of the initialize example.
    let initialize = examples_of(Initialize::NAME)
        .into_iter()
        .next()
        .ok_or_else(|| vec!["the document has no initialize example".to_owned()])?;
    let client_info: ClientInfo =
        serde_json::from_value(params_object(&initialize)["clientInfo"].clone())
            .map_err(|e| vec![format!("initialize: the example's clientInfo: {e}")])?;
    let options = ClientOptions::builder().client_info(client_info).build();
    let client = Client::connect(&args.url, options)
        .await
        .map_err(|e| vec![format!("connect + initialize: {e}")])?;
    let mut failures = Vec::new();
    let mut checked = 0;
    let answered = client
        .server()
        .map(serde_json::to_value::<&InitializeResponse>)
        .transpose()
        .map_err(|e| vec![format!("initialize: cannot re-encode: {e}")])?;
    match typed::<Initialize>(initialize["result"]["value"].clone()) {
        Ok(recorded) if answered.as_ref() == Some(&recorded) => {
            checked += 1;
            println!("ok   initialize over {}: the example's result", args.url);
        }
        Ok(recorded) => failures.push(format!(
            "initialize: answered {answered:?}, the example recorded {recorded}"
        )),
        Err(e) => failures.push(e),
    }

    // 2. A typed request per example.
    let mut calls = Calls::default();
    visit_methods(&mut calls);
    for method in methods {
        let Some(name) = method["name"].as_str() else {
            continue;
        };
        if name == Initialize::NAME {
            continue;
        }
        let examples = examples_of(name);
        if examples.is_empty() {
            continue;
        }
        let Some(call) = calls.0.get(name) else {
            failures.push(format!("{name}: in the document, not in the method table"));
            continue;
        };
        for example in &examples {
            let label = example["name"].as_str().unwrap_or(name);
            let answer = match call(&client, params_object(example)).await {
                Ok(answer) => answer,
                Err(e) => {
                    failures.push(format!("{name} ({label}): {e}"));
                    continue;
                }
            };
            checked += 1;
            let recorded = match call_typed(name, example["result"]["value"].clone()) {
                Some(Ok(recorded)) => recorded,
                Some(Err(e)) => {
                    failures.push(format!("{name} ({label}): {e}"));
                    continue;
                }
                None => {
                    failures.push(format!("{name}: no response type"));
                    continue;
                }
            };
            // The mock answers an example whose params match by position (always so without
            // params) with its recorded result, anything else with data made up from the schema.
            let parameterless = example["params"].as_array().is_some_and(Vec::is_empty);
            if recorded == answer {
                println!("ok   {name} ({label}): typed, the recorded result");
            } else if parameterless {
                failures.push(format!(
                    "{name} ({label}): answered {answer}, recorded {recorded}"
                ));
            } else {
                println!("ok   {name} ({label}): typed, data the mock made up from the schema");
            }
        }
    }

    // 3. Params that break the schema are refused by the mock's validation.
    let bad = serde_json::json!({ "limit": "ten" });
    match client.request_value("thread/list", Some(bad)).await {
        Err(Error::Rpc { error, .. }) if error.code == error_codes::INVALID_PARAMS => {
            checked += 1;
            println!(
                "ok   thread/list with limit \"ten\": -32602 {}",
                error.message
            );
        }
        other => failures.push(format!(
            "thread/list with limit \"ten\": expected -32602, got {other:?}"
        )),
    }

    if failures.is_empty() {
        Ok(checked)
    } else {
        Err(failures)
    }
}

/// `typed::<M>` for the method called `name`.
fn call_typed(name: &str, value: Value) -> Option<Result<Value, String>> {
    struct Find<'a> {
        name: &'a str,
        value: Option<Value>,
        out: Option<Result<Value, String>>,
    }
    impl MethodVisitor for Find<'_> {
        fn client_request<M: Request>(&mut self) {
            if M::NAME == self.name
                && let Some(value) = self.value.take()
            {
                self.out = Some(typed::<M>(value));
            }
        }
        fn server_request<M: Request>(&mut self) {}
        fn server_notification<M: Notification>(&mut self) {}
        fn client_notification<M: Notification>(&mut self) {}
    }
    let mut find = Find {
        name,
        value: Some(value),
        out: None,
    };
    visit_methods(&mut find);
    find.out
}
