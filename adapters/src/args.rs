//! [`args!`](crate::args): argument and output types for typed tools and prompts, declared in
//! one line each.

/// Declares argument and output types for typed tools and prompts, one line each: every
/// struct derives `Debug`, `Clone`, serde's `Serialize` and `Deserialize`, and schemars'
/// `JsonSchema`, through Talaria's own re-exports, so the crate that uses it needs no
/// dependency on serde or schemars. Optional: a hand-written derive does the same.
///
/// Attributes and doc comments on a struct or a field are kept (a field's doc comment becomes
/// its description in the schema). The expansion of
///
/// ```ignore
/// talaria::args! {
///     /// Two integers.
///     pub struct Add { a: i64, b: i64 }
/// }
/// ```
///
/// is
///
/// ```ignore
/// /// Two integers.
/// #[derive(Debug, Clone, ::talaria::core::__private::serde::Serialize,
///     ::talaria::core::__private::serde::Deserialize,
///     ::talaria::core::__private::schemars::JsonSchema)]
/// #[serde(crate = "::talaria::core::__private::serde")]
/// #[schemars(crate = "::talaria::core::__private::schemars")]
/// pub struct Add { a: i64, b: i64 }
/// ```
///
/// The crate paths are spelled out, so the calling crate must name this crate `talaria` (the
/// default). Every field's type must implement all of the traits derived.
///
/// # Examples
///
/// ```
/// use talaria::prelude::*;
///
/// talaria::args! {
///     struct Add {
///         /// The first term.
///         a: i64,
///         b: i64,
///     }
///     struct Sum { sum: i64 }
/// }
///
/// let router = Router::<()>::builder()
///     .typed_structured_tool("add", "Adds two integers", |_, a: Add| Ok(Sum { sum: a.a + a.b }))
///     .build();
/// # drop(router);
/// let schema = Tool::for_args::<Add>("add").input_schema;
/// assert_eq!(schema["required"], serde_json::json!(["a", "b"]));
/// assert_eq!(schema["properties"]["a"]["description"], "The first term.");
/// ```
#[macro_export]
macro_rules! args {
    ($($(#[$meta:meta])* $vis:vis struct $name:ident { $($(#[$field_meta:meta])* $field_vis:vis $field:ident : $ty:ty),* $(,)? })*) => {
        $(
            $(#[$meta])*
            #[derive(
                Debug,
                Clone,
                ::talaria::core::__private::serde::Serialize,
                ::talaria::core::__private::serde::Deserialize,
                ::talaria::core::__private::schemars::JsonSchema
            )]
            #[serde(crate = "::talaria::core::__private::serde")]
            #[schemars(crate = "::talaria::core::__private::schemars")]
            $vis struct $name { $($(#[$field_meta])* $field_vis $field: $ty),* }
        )*
    };
}
