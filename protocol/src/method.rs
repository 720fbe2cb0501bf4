//! What a method is: its wire name, direction, params, response, stability and age.
//!
//! Every method of the protocol is a zero-sized marker type implementing [`Method`] (and
//! [`Request`] or [`Notification`]). The markers are declared once, in [`crate::methods`]; codegen,
//! the runtime and the engine all read that one table.

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use ts_rs::TS;

macro_rules! wire_type {
    ($($bound:ident),*) => {
        /// Everything that travels on the wire derives these: serde for the bytes, schemars for
        /// the JSON Schema bundle (with the `schema` feature), ts-rs for the TypeScript
        /// definitions (with the `ts` feature).
        pub trait WireType:
            Serialize + DeserializeOwned + $($bound +)* Send + Sync + 'static
        {
        }

        impl<T> WireType for T where
            T: Serialize + DeserializeOwned + $($bound +)* Send + Sync + 'static
        {
        }
    };
}

#[cfg(all(feature = "schema", feature = "ts"))]
wire_type!(JsonSchema, TS);
#[cfg(all(feature = "schema", not(feature = "ts")))]
wire_type!(JsonSchema);
#[cfg(all(not(feature = "schema"), feature = "ts"))]
wire_type!(TS);
#[cfg(not(any(feature = "schema", feature = "ts")))]
wire_type!();

/// Who sends a message, and whether it expects an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// Sent by the client; the server answers with a response or an error.
    ClientRequest,
    /// Sent by the server (approvals); the client answers with a response or an error.
    ServerRequest,
    /// Sent by the server; no answer.
    ServerNotification,
    /// Sent by the client; no answer.
    ClientNotification,
}

impl Direction {
    /// The name used in `meta.json` and in the bundle's `x-direction` markers.
    pub const fn wire_name(self) -> &'static str {
        match self {
            Direction::ClientRequest => "clientRequest",
            Direction::ServerRequest => "serverRequest",
            Direction::ServerNotification => "serverNotification",
            Direction::ClientNotification => "clientNotification",
        }
    }

    /// Parses a name written by [`Direction::wire_name`].
    pub fn from_wire_name(name: &str) -> Option<Self> {
        [
            Direction::ClientRequest,
            Direction::ServerRequest,
            Direction::ServerNotification,
            Direction::ClientNotification,
        ]
        .into_iter()
        .find(|d| d.wire_name() == name)
    }

    /// Whether a message in this direction carries an `id` and expects a response.
    pub const fn is_request(self) -> bool {
        matches!(self, Direction::ClientRequest | Direction::ServerRequest)
    }
}

/// A protocol method: the marker type's associated items are the method's declaration.
pub trait Method: 'static {
    /// The `method` string on the wire, e.g. `thread/start`.
    const NAME: &'static str;
    /// Who sends it.
    const DIRECTION: Direction;
    /// Experimental methods are only accepted from, and only sent to, connections that set
    /// `capabilities.experimentalApi` during `initialize`; stable generated output leaves them out.
    const EXPERIMENTAL: bool;
    /// The protocol version (semver) that added the method.
    const SINCE: &'static str;
    /// What the method does, from its doc comment in the method table.
    const DOC: &'static str;
    /// Whether the `params` member may be left out or `null` ([`Method::Params`] is then
    /// `Option<…>`).
    const PARAMS_OPTIONAL: bool;
    /// The type of `params`; [`NoParams`] for methods whose messages carry none, `Option<P>` for
    /// methods whose params may be left out.
    type Params: WireType;
    /// The params member (wire name) whose value orders the method: messages with the same
    /// value are handled one after the other, in arrival order (`threadId` for the methods of a
    /// thread). Declared in the method table with `ordered_by:`; `None` for unordered methods.
    const ORDERED_BY: Option<&'static str> = None;

    /// The value of the [`Method::ORDERED_BY`] member in `params`, when there is one.
    fn ordering_key(params: &Self::Params) -> Option<&str> {
        let _ = params;
        None
    }
}

/// The answer that declines a server request, for when the client gives none (it timed out,
/// closed, or sent something malformed): implemented on the request's response type, declared
/// in the method table with `decline:`.
pub trait Decline {
    /// The refusal, with the reason (shown where the type carries text).
    fn decline(reason: &str) -> Self;
}

/// A params member that can order a method (see [`Method::ORDERED_BY`]).
pub trait OrderingKey {
    /// The key, when the member holds one.
    fn ordering_key(&self) -> Option<&str>;
}

impl OrderingKey for String {
    fn ordering_key(&self) -> Option<&str> {
        Some(self)
    }
}

impl OrderingKey for Option<String> {
    fn ordering_key(&self) -> Option<&str> {
        self.as_deref()
    }
}

/// A method that is answered: the marker also names the `result` type.
pub trait Request: Method {
    /// The type of `result` in a successful response.
    type Response: WireType;
}

/// A method that is not answered.
pub trait Notification: Method {}

/// The params of a method whose messages carry no `params` member.
///
/// On input it accepts an absent member, `null` or an object (whose members are ignored), so that
/// clients which always send `"params": {}` keep working.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema, TS)]
pub struct NoParams;

impl<'de> serde::Deserialize<'de> for NoParams {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Option::<serde::de::IgnoredAny>::deserialize(deserializer)?;
        let _ = value;
        Ok(NoParams)
    }
}

/// Whether `M` carries `params` on the wire.
pub fn has_params<M: Method>() -> bool {
    std::any::TypeId::of::<M::Params>() != std::any::TypeId::of::<NoParams>()
}

/// A walk over every method of the protocol, with the marker type in hand.
///
/// Codegen implements this to emit schemas and TypeScript for each method's types; the walk is
/// driven by [`crate::methods::visit_methods`], which is generated from the one method table.
pub trait MethodVisitor {
    /// Called once for each client→server request.
    fn client_request<M: Request>(&mut self);
    /// Called once for each server→client request.
    fn server_request<M: Request>(&mut self);
    /// Called once for each server→client notification.
    fn server_notification<M: Notification>(&mut self);
    /// Called once for each client→server notification.
    fn client_notification<M: Notification>(&mut self);
}

/// A method's declaration as plain data, for code that does not need the types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodInfo {
    /// The `method` string on the wire.
    pub name: &'static str,
    /// Who sends it.
    pub direction: Direction,
    /// Whether the method needs the `experimentalApi` capability.
    pub experimental: bool,
    /// The protocol version that added it.
    pub since: &'static str,
    /// The Rust (and schema definition) name of the params type, `None` for [`NoParams`].
    pub params: Option<&'static str>,
    /// Whether `params` may be absent or `null` (the params type is then `Option<…>`).
    pub params_optional: bool,
    /// The Rust (and schema definition) name of the response type; `None` for notifications.
    pub response: Option<&'static str>,
    /// The Rust name of the marker type, e.g. `ThreadStart`.
    pub marker: &'static str,
    /// The params member whose value orders the method (see [`Method::ORDERED_BY`]).
    pub ordered_by: Option<&'static str>,
    /// Whether the method (a server request) declares its decline answer ([`Decline`]).
    pub declines: bool,
}

impl MethodInfo {
    /// Why the method (a client request) is refused instead of served, when it only means
    /// something against a service this server does not reach (`unavailable:` in the table).
    ///
    /// A lookup rather than a field: `MethodInfo` is built with a literal outside this crate,
    /// and a new field would break those literals.
    pub fn unavailable(&self) -> Option<Unavailable> {
        crate::methods::unavailable(self.name)
    }
}

/// Why a declared client request is answered with a refusal: it only means something against a
/// service or platform this server does not reach. The refusal is the JSON-RPC error
/// [`crate::jsonrpc::error_codes::UNAVAILABLE`], its `data` `{"reason": <wire name>, "method":
/// <method>}`, so a client can tell it from a failure and hide the feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Unavailable {
    /// Needs a ChatGPT account signed in with OpenAI (plans, credits, usage, workspace
    /// messages, account sessions, identity verification).
    ChatgptAccount,
    /// Needs an OpenAI cloud service (remote control, plugin sharing, feedback upload, the
    /// OpenAI gateway, predictions, the apps directory).
    OpenaiCloud,
    /// Needs OpenAI's realtime voice service.
    RealtimeVoice,
    /// Sets up a cloud provider account (Amazon Bedrock, Google Cloud) through the vendor's own
    /// sign-in, which this server does not manage: configure such a provider in `config.toml`.
    CloudProviderSetup,
    /// Exists only on Windows.
    WindowsOnly,
}

impl Unavailable {
    /// Every reason, in declaration order.
    pub const ALL: [Unavailable; 5] = [
        Unavailable::ChatgptAccount,
        Unavailable::OpenaiCloud,
        Unavailable::RealtimeVoice,
        Unavailable::CloudProviderSetup,
        Unavailable::WindowsOnly,
    ];

    /// The `data.reason` string of the refusal.
    pub const fn wire_name(self) -> &'static str {
        match self {
            Unavailable::ChatgptAccount => "chatgptAccount",
            Unavailable::OpenaiCloud => "openaiCloud",
            Unavailable::RealtimeVoice => "realtimeVoice",
            Unavailable::CloudProviderSetup => "cloudProviderSetup",
            Unavailable::WindowsOnly => "windowsOnly",
        }
    }

    /// The end of the refusal's message: what the method would need.
    pub const fn explanation(self) -> &'static str {
        match self {
            Unavailable::ChatgptAccount => "it needs a ChatGPT account signed in with OpenAI",
            Unavailable::OpenaiCloud => "it needs an OpenAI cloud service",
            Unavailable::RealtimeVoice => "it needs OpenAI's realtime voice service",
            Unavailable::CloudProviderSetup => {
                "cloud provider accounts are not set up through this server; configure the \
                 provider in config.toml"
            }
            Unavailable::WindowsOnly => "it exists only on Windows",
        }
    }
}

/// A walk over a set of wire types that are not params or results of an app-server method (the
/// MCP-server surface), with each type in hand.
pub trait TypeVisitor {
    /// Called once for each root type of the set.
    fn visit<T: WireType>(&mut self);
}
