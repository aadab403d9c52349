//! Following `nextCursor` through a paginated list.

use crate::alloc_prelude::*;
use crate::time::Instant;

use serde_json::value::RawValue;

use super::Call;
use crate::jsonrpc::RequestId;
use crate::schema::{Paginated, PaginatedRequestParams, RequestMethod};
use crate::session::{CallError, Client, LocalError, RequestOptions, SendError, Session};

/// Collects every page of a list (`tools/list`, `prompts/list`, `resources/list`,
/// `resources/templates/list`), sending the next request as each page arrives, up to a page
/// cap (a server that keeps handing out cursors cannot keep the client busy forever).
///
/// # Examples
///
/// ```
/// use std::time::Instant;
/// use talaria_core::client::{ListAll, ListStep};
/// use talaria_core::schema::{tools::ListTools, Implementation};
/// use talaria_core::session::{Client, ClientConfig, ClientMode, Session};
///
/// let now = Instant::now();
/// let mut client = Session::<Client>::new(ClientConfig::new(Implementation::new("c", "1")).with_mode(ClientMode::Legacy), now);
/// let mut all = ListAll::<ListTools>::start(&mut client, now, 10).unwrap();
/// let page = serde_json::value::to_raw_value(&serde_json::json!({"tools": [], "nextCursor": "2"})).unwrap();
/// let id = all.pending().unwrap().clone();
/// assert!(matches!(all.on_response(&mut client, now, &id, Ok(page)), ListStep::Continue));
/// ```
pub struct ListAll<M>
where
    M: RequestMethod,
    M::Result: Paginated,
{
    items: Vec<<M::Result as Paginated>::Item>,
    current: Option<Call<M>>,
    pages: usize,
    max_pages: usize,
}

/// What a response did to a [`ListAll`].
#[derive(Debug)]
#[non_exhaustive]
pub enum ListStep<T> {
    /// The response was for another request.
    NotMine,
    /// A page arrived and the next was requested.
    Continue,
    /// The last page arrived: every item, in order.
    Done(Vec<T>),
    /// The walk failed (the peer's error, a local failure, or the page cap).
    Failed(CallError),
}

impl<M> ListAll<M>
where
    M: RequestMethod<Params = PaginatedRequestParams>,
    M::Result: Paginated,
{
    /// Requests the first page.
    ///
    /// # Errors
    ///
    /// As [`Session::call`].
    pub fn start(session: &mut Session<Client>, now: Instant, max_pages: usize) -> Result<Self, SendError> {
        let first = session.call::<M>(now, &PaginatedRequestParams::default(), RequestOptions::default())?;
        Ok(Self { items: Vec::new(), current: Some(first), pages: 0, max_pages })
    }

    /// The id of the page request in flight, if any.
    #[must_use]
    pub fn pending(&self) -> Option<&RequestId> {
        self.current.as_ref().map(Call::id)
    }

    /// Feeds a `Event::Response`; requests the next page while there is one.
    pub fn on_response(
        &mut self,
        session: &mut Session<Client>,
        now: Instant,
        id: &RequestId,
        outcome: Result<Box<RawValue>, CallError>,
    ) -> ListStep<<M::Result as Paginated>::Item> {
        let Some(call) = self.current.take_if(|c| c.id() == id) else { return ListStep::NotMine };
        let page = match call.outcome(outcome) {
            Ok(page) => page,
            Err(e) => return ListStep::Failed(e),
        };
        self.pages += 1;
        let next = page.next_cursor().map(str::to_owned);
        self.items.extend(page.into_items());
        let Some(cursor) = next else { return ListStep::Done(core::mem::take(&mut self.items)) };
        if self.pages >= self.max_pages {
            let why = format!("{} still had more after {} pages", M::INFO.name, self.pages);
            return ListStep::Failed(CallError::Local(LocalError::MalformedResponse(why)));
        }
        match session.call::<M>(now, &PaginatedRequestParams::after(cursor), RequestOptions::default()) {
            Ok(call) => {
                self.current = Some(call);
                ListStep::Continue
            }
            Err(e) => ListStep::Failed(CallError::Local(LocalError::from(e))),
        }
    }
}
