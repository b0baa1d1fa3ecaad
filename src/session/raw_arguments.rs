//! A `tools/call`'s arguments as the agent wrote them, carried past rmcp. rmcp decodes a
//! request's params into `serde_json::Value`s, which keep no big integer
//! (`123456789012345678901234567890` comes out `1.2345678901234568e+29`), no exact decimal
//! (`1.50`), no exponent as written, and refuse what a child may still read (`1e400`): a call
//! rmcp serves would reach the child changed. So the transport that hands rmcp a `tools/call`
//! takes its object of arguments out of the params first and puts it beside the request, in the
//! request's extensions (stdio: rmcp's request; HTTP: the HTTP request's, which rmcp passes on in
//! `http::request::Parts`); the handler reads the call from there (`RawArguments::of`). Every
//! other member of the message stays as written; arguments that are not an object stay too, for
//! rmcp to refuse as before.

use std::borrow::Cow;

use indexmap::IndexMap;
use rmcp::{RoleServer, model::JsonObject, service::RequestContext};
use serde_json::value::RawValue;

const ARGUMENTS: &str = "arguments";

/// The object of arguments of one `tools/call`, as written.
#[derive(Clone, Debug)]
pub(crate) struct RawArguments(Box<RawValue>);

/// An object's members, each value as written, in the order written (a key written twice keeps
/// its last value, as rmcp's decoding does).
type Members<'a> = IndexMap<Cow<'a, str>, &'a RawValue>;

impl RawArguments {
    /// The arguments as written.
    pub(crate) fn get(&self) -> &RawValue {
        &self.0
    }

    /// The arguments of the `tools/call` whose `params` these are, taken out: the params without
    /// them, and the arguments; `None` when the params hold no object of arguments.
    pub(crate) fn split_params(params: &RawValue) -> Option<(Box<RawValue>, RawArguments)> {
        let mut members: Members<'_> = serde_json::from_str(params.get()).ok()?;
        let arguments = members
            .shift_remove(ARGUMENTS)
            .filter(|arguments| arguments.get().starts_with('{'))?;
        let rest = serde_json::value::to_raw_value(&members).ok()?;
        Some((rest, RawArguments(arguments.to_owned())))
    }

    /// The same for a whole JSON-RPC message (an HTTP request's body): the message without the
    /// arguments, and the arguments, when it is a `tools/call` that has an object of them.
    pub(crate) fn split_message(message: &[u8]) -> Option<(Vec<u8>, RawArguments)> {
        let text = std::str::from_utf8(message).ok()?;
        let mut members: Members<'_> = serde_json::from_str(text).ok()?;
        let method = members.get("method")?;
        if serde_json::from_str::<Cow<'_, str>>(method.get()).ok()? != "tools/call" {
            return None;
        }
        let (params, arguments) = Self::split_params(members.get("params")?)?;
        *members.get_mut("params")? = &params;
        Some((serde_json::to_vec(&members).ok()?, arguments))
    }

    /// The arguments the transport put beside the request of `context`, if it did.
    pub(crate) fn of(context: &RequestContext<RoleServer>) -> Option<&RawValue> {
        let extensions = &context.extensions;
        let arguments = extensions.get::<RawArguments>().or_else(|| {
            let parts = extensions.get::<http::request::Parts>()?;
            parts.extensions.get::<RawArguments>()
        })?;
        Some(arguments.get())
    }

    /// A call's arguments: as the agent wrote them (`of`), else as rmcp `decoded` them.
    pub(crate) fn of_call(
        context: &RequestContext<RoleServer>,
        decoded: Option<JsonObject>,
    ) -> Option<Box<RawValue>> {
        match Self::of(context) {
            Some(written) => Some(written.to_owned()),
            None => decoded.and_then(|decoded| serde_json::value::to_raw_value(&decoded).ok()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).expect("JSON")
    }

    #[test]
    fn the_arguments_leave_the_params_as_written_and_the_rest_stays() {
        let params = raw(
            r#"{"name":"use_tool","arguments":{"n":1.50, "e":1E2,"s":"\u00e9"},"_meta":{"k":1.0}}"#,
        );
        let (rest, arguments) = RawArguments::split_params(&params).expect("split");
        assert_eq!(arguments.get().get(), r#"{"n":1.50, "e":1E2,"s":"\u00e9"}"#);
        assert_eq!(rest.get(), r#"{"name":"use_tool","_meta":{"k":1.0}}"#);
        // Arguments that are not an object stay for rmcp to refuse.
        for params in [r#"{"name":"x","arguments":5}"#, r#"{"name":"x"}"#, "[]"] {
            assert!(
                RawArguments::split_params(&raw(params)).is_none(),
                "{params}"
            );
        }
    }

    #[test]
    fn only_a_tools_call_message_is_split() {
        let message = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":{"big":123456789012345678901234567890}}}"#;
        let (rest, arguments) = RawArguments::split_message(message).expect("split");
        assert_eq!(
            String::from_utf8(rest).expect("UTF-8"),
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t"}}"#
        );
        assert_eq!(
            arguments.get().get(),
            r#"{"big":123456789012345678901234567890}"#
        );
        let other = br#"{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"t","arguments":{}}}"#;
        assert!(RawArguments::split_message(other).is_none());
        assert!(RawArguments::split_message(b"[1]").is_none());
    }
}
