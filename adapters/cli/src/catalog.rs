//! What the server offers, as last listed: tools (with their schemas), prompts, resources and
//! templates. Typed arguments, argument prompts and tab completion read it; a `list_changed`
//! notification forgets the list it names.

use std::sync::{Mutex, PoisonError};

use talaria_core::schema::prompts::Prompt;
use talaria_core::schema::resources::{Resource, ResourceTemplate};
use talaria_core::schema::tools::Tool;

/// The lists, each `None` until fetched.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lists {
    /// The tools.
    pub(crate) tools: Option<Vec<Tool>>,
    /// The prompts.
    pub(crate) prompts: Option<Vec<Prompt>>,
    /// The resources.
    pub(crate) resources: Option<Vec<Resource>>,
    /// The resource templates.
    pub(crate) templates: Option<Vec<ResourceTemplate>>,
}

/// The lists, shared by the command runner, the notification callback and the completer.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    lists: Mutex<Lists>,
}

impl Catalog {
    /// A copy of the lists.
    pub(crate) fn lists(&self) -> Lists {
        self.lists.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Changes the lists.
    pub(crate) fn update(&self, change: impl FnOnce(&mut Lists)) {
        change(&mut self.lists.lock().unwrap_or_else(PoisonError::into_inner));
    }

    /// Forgets everything (a new connection).
    pub(crate) fn clear(&self) {
        self.update(|lists| *lists = Lists::default());
    }

    /// Forgets the list a `notifications/*/list_changed` method names; whether it was one.
    pub(crate) fn forget(&self, method: &str) -> bool {
        match method {
            "notifications/tools/list_changed" => self.update(|l| l.tools = None),
            "notifications/prompts/list_changed" => self.update(|l| l.prompts = None),
            "notifications/resources/list_changed" => self.update(|l| {
                l.resources = None;
                l.templates = None;
            }),
            _ => return false,
        }
        true
    }

    /// The tool named `name`, if listed.
    pub(crate) fn tool(&self, name: &str) -> Option<Tool> {
        self.lists
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .tools
            .as_ref()?
            .iter()
            .find(|t| t.name == name)
            .cloned()
    }

    /// The prompt named `name`, if listed.
    pub(crate) fn prompt(&self, name: &str) -> Option<Prompt> {
        let lists = self.lists.lock().unwrap_or_else(PoisonError::into_inner);
        lists.prompts.as_ref()?.iter().find(|p| p.name == name).cloned()
    }
}
