//! OAuth sign-in to a streamable-HTTP MCP server, end to end: the test runs an authorization
//! server and a protected MCP endpoint on one loopback port (plain HTTP/1.1 on std threads),
//! calls `mcpServer/oauth/login`, plays the browser (GETs the authorization URL and follows
//! its redirect to the server's loopback listener), then checks `mcpServer/oauthLogin/completed`,
//! the credentials file (0600), PKCE, dynamic registration, that MCP requests now carry the
//! bearer token, that an expiring token is refreshed, and the errors for bad requests.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use serde_json::{Value, json};

use crate::client::{Client, thread_id};
use crate::common::{home_and_workspace, mode, scratch};

/// What the fake authorization server and MCP endpoint saw and issued.
#[derive(Default)]
struct Seen {
    /// Registration requests (JSON bodies).
    registrations: Vec<Value>,
    /// Authorization requests' query parameters.
    authorizations: Vec<BTreeMap<String, String>>,
    /// Token requests' form parameters.
    token_requests: Vec<BTreeMap<String, String>>,
    /// The `Authorization` header of each MCP request (`None` when absent), with its method.
    mcp_requests: Vec<(String, Option<String>)>,
    /// Codes issued: code → (client id, redirect URI, PKCE challenge).
    codes: BTreeMap<String, (String, String, String)>,
    /// Access tokens the MCP endpoint accepts.
    valid_tokens: Vec<String>,
    /// Tokens issued so far (names the next one).
    issued: usize,
    /// `expires_in` of the next access token.
    expires_in: i64,
}

/// The fake servers, on `127.0.0.1:<port>`.
struct Fake {
    port: u16,
    seen: Arc<Mutex<Seen>>,
}

impl Fake {
    fn start(expires_in: i64) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let seen = Arc::new(Mutex::new(Seen {
            expires_in,
            ..Seen::default()
        }));
        let shared = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let seen = shared.clone();
                std::thread::spawn(move || serve(stream, port, &seen));
            }
        });
        Self { port, seen }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().expect("seen")
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).expect("hex");
                out.push(u8::from_str_radix(hex, 16).expect("hex digit"));
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).expect("utf-8")
}

fn form(text: &str) -> BTreeMap<String, String> {
    text.split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(name), percent_decode(value))
        })
        .collect()
}

fn respond(stream: &mut TcpStream, status: &str, headers: &[(&str, String)], body: &str) {
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
}

fn json_reply(stream: &mut TcpStream, status: &str, body: &Value) {
    respond(
        stream,
        status,
        &[("Content-Type", "application/json".to_owned())],
        &body.to_string(),
    );
}

/// The PKCE S256 challenge of `verifier`, computed with the system's `sha256sum`.
fn s256(verifier: &str) -> String {
    let mut child = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("sha256sum");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(verifier.as_bytes())
        .expect("write");
    let output = child.wait_with_output().expect("sha256sum output");
    let hex = String::from_utf8(output.stdout).expect("utf-8");
    let digest: Vec<u8> = (0..32)
        .map(|i| u8::from_str_radix(&hex[i * 2..i * 2 + 2], 16).expect("hex"))
        .collect();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest)
}

fn serve(mut stream: TcpStream, port: u16, seen: &Mutex<Seen>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let mut parts = line.split_whitespace();
    let (method, target) = (
        parts.next().unwrap_or_default().to_owned(),
        parts.next().unwrap_or_default().to_owned(),
    );
    let mut headers = BTreeMap::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).is_err() || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    let length: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let body = String::from_utf8_lossy(&body).into_owned();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let base = format!("http://127.0.0.1:{port}");
    let mut seen = seen.lock().expect("seen");
    match (method.as_str(), path) {
        ("GET", "/.well-known/oauth-protected-resource/mcp") => json_reply(
            &mut stream,
            "200 OK",
            &json!({
                "resource": format!("{base}/mcp"),
                "authorization_servers": [format!("{base}/as")],
                "scopes_supported": ["tools:read"],
            }),
        ),
        ("GET", "/.well-known/oauth-authorization-server/as") => json_reply(
            &mut stream,
            "200 OK",
            &json!({
                "issuer": format!("{base}/as"),
                "authorization_endpoint": format!("{base}/as/authorize"),
                "token_endpoint": format!("{base}/as/token"),
                "registration_endpoint": format!("{base}/as/register"),
                "code_challenge_methods_supported": ["S256"],
                "response_types_supported": ["code"],
            }),
        ),
        ("POST", "/as/register") => {
            let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            seen.registrations.push(request.clone());
            let id = format!("client-{}", seen.registrations.len());
            json_reply(
                &mut stream,
                "201 Created",
                &json!({"client_id": id, "redirect_uris": request["redirect_uris"]}),
            );
        }
        ("GET", "/as/authorize") => {
            let params = form(query);
            seen.authorizations.push(params.clone());
            let code = format!("code-{}", seen.authorizations.len());
            seen.codes.insert(
                code.clone(),
                (
                    params.get("client_id").cloned().unwrap_or_default(),
                    params.get("redirect_uri").cloned().unwrap_or_default(),
                    params.get("code_challenge").cloned().unwrap_or_default(),
                ),
            );
            let location = format!(
                "{}?code={code}&state={}",
                params.get("redirect_uri").cloned().unwrap_or_default(),
                params.get("state").cloned().unwrap_or_default()
            );
            respond(&mut stream, "302 Found", &[("Location", location)], "");
        }
        ("POST", "/as/token") => {
            let params = form(&body);
            seen.token_requests.push(params.clone());
            let grant = params.get("grant_type").cloned().unwrap_or_default();
            let valid = match grant.as_str() {
                "authorization_code" => {
                    let code = params.get("code").cloned().unwrap_or_default();
                    seen.codes
                        .remove(&code)
                        .is_some_and(|(client, redirect, challenge)| {
                            params.get("client_id") == Some(&client)
                                && params.get("redirect_uri") == Some(&redirect)
                                && params
                                    .get("code_verifier")
                                    .is_some_and(|v| s256(v) == challenge)
                        })
                }
                "refresh_token" => params.get("refresh_token").map(String::as_str) == Some("rt-1"),
                _ => false,
            };
            if !valid {
                json_reply(
                    &mut stream,
                    "400 Bad Request",
                    &json!({"error": "invalid_grant"}),
                );
                return;
            }
            seen.issued += 1;
            let token = format!("at-{}", seen.issued);
            seen.valid_tokens.push(token.clone());
            let expires_in = seen.expires_in;
            seen.expires_in = 3600;
            json_reply(
                &mut stream,
                "200 OK",
                &json!({"access_token": token, "token_type": "Bearer", "expires_in": expires_in,
                        "refresh_token": "rt-1", "scope": "tools:read"}),
            );
        }
        (_, "/mcp") => {
            let authorization = headers.get("authorization").cloned();
            let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            let rpc = request["method"].as_str().unwrap_or(&method).to_owned();
            seen.mcp_requests.push((rpc.clone(), authorization.clone()));
            let token = authorization
                .as_deref()
                .and_then(|a| a.strip_prefix("Bearer "))
                .map(str::to_owned);
            if !token
                .as_ref()
                .is_some_and(|t| seen.valid_tokens.contains(t))
            {
                respond(
                    &mut stream,
                    "401 Unauthorized",
                    &[(
                        "WWW-Authenticate",
                        format!(
                            "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
                        ),
                    )],
                    "",
                );
                return;
            }
            if method != "POST" {
                respond(&mut stream, "405 Method Not Allowed", &[], "");
                return;
            }
            let id = request["id"].clone();
            let result = match rpc.as_str() {
                "initialize" => json!({
                    "protocolVersion": request["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "oauth-e2e", "version": "1.0.0"},
                }),
                "tools/list" => json!({"tools": [{
                    "name": "whoami",
                    "description": "Says which token the request carried.",
                    "inputSchema": {"type": "object", "properties": {}},
                }]}),
                "tools/call" => json!({
                    "content": [{"type": "text", "text": format!("token {}", token.unwrap_or_default())}],
                }),
                _ if id.is_null() => {
                    respond(&mut stream, "202 Accepted", &[], "");
                    return;
                }
                _ => {
                    json_reply(
                        &mut stream,
                        "200 OK",
                        &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}}),
                    );
                    return;
                }
            };
            json_reply(
                &mut stream,
                "200 OK",
                &json!({"jsonrpc": "2.0", "id": id, "result": result}),
            );
        }
        _ => respond(&mut stream, "404 Not Found", &[], ""),
    }
}

/// One HTTP GET of `url` (`http://127.0.0.1:…` only): status code, `Location`, body.
fn get(url: &str) -> (u16, Option<String>, String) {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = TcpStream::connect(authority).expect("connect");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status");
    let location = head.lines().find_map(|l| {
        l.strip_prefix("Location: ")
            .or_else(|| l.strip_prefix("location: "))
            .map(str::to_owned)
    });
    (status, location, body.to_owned())
}

/// Plays the browser: opens `authorization_url`, follows the redirect to the loopback
/// listener; the listener's answer.
fn browse(authorization_url: &str) -> (u16, String) {
    let (status, location, _) = get(authorization_url);
    assert_eq!(status, 302, "the authorization server redirects");
    let callback = location.expect("a Location");
    assert!(
        callback.starts_with("http://127.0.0.1:") && callback.contains("/callback?"),
        "{callback}"
    );
    let (status, _, body) = get(&callback);
    (status, body)
}

fn config(home: &Path, fake: &Fake) {
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[mcp_servers.docs]\nurl = {:?}\n[mcp_servers.local]\ncommand = \"true\"\n",
            fake.url("/mcp")
        ),
    )
    .expect("config");
}

fn status_of(client: &mut Client, name: &str) -> Value {
    client.call("mcpServerStatus/list", json!({"serverName": name}))["data"][0].clone()
}

fn whoami(client: &mut Client, thread: &str) -> Value {
    client.call(
        "mcpServer/tool/call",
        json!({"threadId": thread, "server": "docs", "tool": "whoami", "arguments": {}}),
    )
}

#[test]
fn a_sign_in_stores_private_tokens_and_mcp_requests_carry_them() {
    let fake = Fake::start(3600);
    let root = scratch("mcp-oauth");
    let (home, workspace) = home_and_workspace(&root);
    config(&home, &fake);
    let mut client = Client::start(&home);

    // Before signing in, the server refuses and its status says how to sign in.
    let before = status_of(&mut client, "docs");
    assert_eq!(before["runtimeStatus"], json!("failed"), "{before}");
    assert!(
        before["toolsError"]
            .as_str()
            .is_some_and(|e| e.contains("mcpServer/oauth/login")),
        "{before}"
    );

    let started = client.call(
        "mcpServer/oauth/login",
        json!({"name": "docs", "threadId": "t-1"}),
    );
    let url = started["authorizationUrl"]
        .as_str()
        .expect("authorizationUrl");
    let login_id = started["loginId"].as_str().expect("loginId").to_owned();
    assert!(url.starts_with(&fake.url("/as/authorize?")), "{url}");
    {
        let seen = fake.seen();
        assert_eq!(seen.registrations.len(), 1, "a client was registered");
        let registration = &seen.registrations[0];
        assert_eq!(registration["token_endpoint_auth_method"], json!("none"));
        assert!(
            registration["redirect_uris"][0]
                .as_str()
                .is_some_and(|u| u.starts_with("http://127.0.0.1:") && u.ends_with("/callback")),
            "{registration}"
        );
    }

    let (status, page) = browse(url);
    assert_eq!(status, 200, "{page}");
    let done = client.notification("mcpServer/oauthLogin/completed");
    assert_eq!(
        done,
        json!({"name": "docs", "success": true, "error": null, "loginId": login_id, "threadId": "t-1"})
    );
    {
        let seen = fake.seen();
        let authorization = &seen.authorizations[0];
        assert_eq!(authorization["code_challenge_method"], "S256");
        assert_eq!(authorization["client_id"], "client-1");
        assert_eq!(authorization["scope"], "tools:read");
        assert_eq!(authorization["resource"], fake.url("/mcp"));
        let exchange = &seen.token_requests[0];
        assert_eq!(exchange["grant_type"], "authorization_code");
        // The fake checked the verifier against the challenge before issuing `at-1`.
        assert_eq!(seen.valid_tokens, ["at-1"]);
    }

    let file = home.join("mcp-oauth.json");
    assert_eq!(mode(&file), 0o600);
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("read")).expect("json");
    assert_eq!(stored["servers"]["docs"]["accessToken"], json!("at-1"));
    assert_eq!(stored["servers"]["docs"]["url"], json!(fake.url("/mcp")));

    // MCP requests now carry the token; the tool answers with what it saw.
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    let answer = whoami(&mut client, &thread);
    assert_eq!(
        answer["content"][0]["text"],
        json!("token at-1"),
        "{answer}"
    );
    {
        let seen = fake.seen();
        let call = seen
            .mcp_requests
            .iter()
            .find(|(method, _)| method == "tools/call")
            .expect("a tools/call reached the server");
        assert_eq!(call.1.as_deref(), Some("Bearer at-1"));
    }
    let after = status_of(&mut client, "docs");
    assert_eq!(after["authStatus"], json!("oAuth"), "{after}");
    assert_eq!(after["runtimeStatus"], json!("connected"), "{after}");

    // A restarted server uses the stored token without a new sign-in.
    drop(client);
    let mut client = Client::start(&home);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    assert_eq!(
        whoami(&mut client, &thread)["content"][0]["text"],
        json!("token at-1")
    );
    assert_eq!(fake.seen().registrations.len(), 1);
}

#[test]
fn an_expiring_token_is_refreshed_before_use() {
    // The first token expires within the refresh margin, so the first connection refreshes it.
    let fake = Fake::start(5);
    let root = scratch("mcp-oauth-refresh");
    let (home, workspace) = home_and_workspace(&root);
    config(&home, &fake);
    let mut client = Client::start(&home);
    let started = client.call("mcpServer/oauth/login", json!({"name": "docs"}));
    let (status, _) = browse(started["authorizationUrl"].as_str().expect("url"));
    assert_eq!(status, 200);
    let done = client.notification("mcpServer/oauthLogin/completed");
    assert_eq!(done["success"], json!(true), "{done}");
    assert_eq!(done["threadId"], Value::Null);
    let thread = thread_id(&client.start_thread(json!({"cwd": workspace})));
    let answer = whoami(&mut client, &thread);
    assert_eq!(
        answer["content"][0]["text"],
        json!("token at-2"),
        "{answer}"
    );
    let seen = fake.seen();
    let refresh = seen.token_requests.last().expect("a refresh");
    assert_eq!(refresh["grant_type"], "refresh_token");
    assert_eq!(refresh["client_id"], "client-1");
    drop(seen);
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join("mcp-oauth.json")).expect("read"))
            .expect("json");
    assert_eq!(stored["servers"]["docs"]["accessToken"], json!("at-2"));
    assert_eq!(stored["servers"]["docs"]["refreshToken"], json!("rt-1"));
}

#[test]
fn a_refused_sign_in_and_bad_requests_are_reported() {
    let fake = Fake::start(3600);
    let root = scratch("mcp-oauth-errors");
    let (home, _workspace) = home_and_workspace(&root);
    config(&home, &fake);
    let mut client = Client::start(&home);

    let unknown = client.call_err("mcpServer/oauth/login", json!({"name": "nope"}));
    assert_eq!(unknown["code"], json!(-32602), "{unknown}");
    assert!(unknown.to_string().contains("nope"), "{unknown}");
    let stdio = client.call_err("mcpServer/oauth/login", json!({"name": "local"}));
    assert_eq!(stdio["code"], json!(-32602), "{stdio}");
    assert!(stdio.to_string().contains("stdio"), "{stdio}");
    let timeout = client.call_err(
        "mcpServer/oauth/login",
        json!({"name": "docs", "timeoutSecs": 0}),
    );
    assert!(timeout.to_string().contains("timeoutSecs"), "{timeout}");

    // The user denies access: the browser comes back with an error, the sign-in fails.
    let started = client.call("mcpServer/oauth/login", json!({"name": "docs"}));
    let url = started["authorizationUrl"].as_str().expect("url");
    let params = form(url.split_once('?').expect("query").1);
    let denied = format!(
        "{}?error=access_denied&error_description=denied+by+user&state={}",
        params["redirect_uri"], params["state"]
    );
    // A redirect with another state is not taken for this sign-in.
    let forged = format!("{}?code=x&state=forged", params["redirect_uri"]);
    assert_eq!(get(&forged).0, 404);
    let (status, _, _) = get(&denied);
    assert_eq!(status, 400);
    let done = client.notification("mcpServer/oauthLogin/completed");
    assert_eq!(done["success"], json!(false), "{done}");
    assert!(
        done["error"]
            .as_str()
            .is_some_and(|e| e.contains("access_denied")),
        "{done}"
    );
    assert!(!home.join("mcp-oauth.json").exists());
}
