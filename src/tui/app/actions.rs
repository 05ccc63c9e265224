//! Keys: the prompt editor, the help popup, and every action of the key map. Every action
//! answers visibly, on the screen or in the status line, also when it cannot do anything.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::screens::{
    with_component, Component, DescriptorScreen, ProfileScreen, ReplayScreen, TuneScreen,
};
use super::{App, Cmd, Screen};
use crate::tui::keymap::{self, Action, Scope};

impl App {
    pub(super) fn on_key(&mut self, k: KeyEvent) -> Vec<Cmd> {
        if k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL) {
            return self.quit_all();
        }
        // `r` again confirms the replacement of an opened sweep it asked about (`start_tune`);
        // any other key forgets the question.
        if let Some(asked) = self.tune.replace_asked.take() {
            let plain = self.prompt.is_none()
                && self.tune.form.editing.is_none()
                && !self.help
                && !self.picking;
            if plain && keymap::lookup(self.scope(), &k) == Some(Action::TuneStart) {
                self.tune.replace_asked = Some(asked);
            }
        }
        if self.prompt.is_some() {
            return self.on_prompt_key(k);
        }
        if self.tune.form.editing.is_some() {
            TuneScreen::on_edit_key(self, k);
            return vec![];
        }
        if self.help {
            self.on_help_key(k);
            return vec![];
        }
        // A key the shown screen takes before the key table (the Replay screen's Enter).
        let taken = with_component!(self.screen, S => S::on_key(self, &k));
        if let Some(cmds) = taken {
            return cmds;
        }
        match keymap::lookup(self.scope(), &k) {
            Some(a) if self.picking => self.on_picker_action(a),
            Some(a) => self.on_action(a),
            None => {
                // A printable key that means nothing here says so (rather than nothing at all);
                // modifier combinations and terminal noise stay silent.
                if let KeyCode::Char(c) = k.code {
                    if !k
                        .modifiers
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
                        && !c.is_control()
                    {
                        self.set_status(
                            format!(
                                "`{}` does nothing on the {} screen (? lists the keys)",
                                rr_format::text::visible(&c.to_string()),
                                match self.picking {
                                    true => "record directories",
                                    false => self.screen.title(),
                                }
                            ),
                            false,
                        );
                    }
                }
                vec![]
            }
        }
    }

    fn on_help_key(&mut self, k: KeyEvent) {
        match keymap::lookup(Scope::Global, &k) {
            Some(Action::Help | Action::Back | Action::Quit) => {
                self.help = false;
                self.help_scroll = 0;
            }
            Some(a) => self.scroll_help(a),
            None => {}
        }
    }

    /// Lines of the help popup that fit on screen.
    pub fn help_rows(&self) -> usize {
        keymap::help_popup_height(self.scope(), self.height, self.width).saturating_sub(2) as usize
    }

    pub(super) fn scroll_help(&mut self, a: Action) {
        let lines = keymap::help_rows(self.scope(), keymap::help_popup_width(self.width)).len();
        let last = lines.saturating_sub(self.help_rows());
        let page = self.help_rows().max(1);
        self.help_scroll = match a {
            Action::Up => self.help_scroll.saturating_sub(1),
            Action::Down => self.help_scroll + 1,
            Action::PageUp => self.help_scroll.saturating_sub(page),
            Action::PageDown => self.help_scroll + page,
            Action::Top => 0,
            Action::Bottom => last,
            _ => self.help_scroll,
        }
        .min(last);
    }

    fn switch(&mut self, screen: Screen) -> Vec<Cmd> {
        self.screen = screen;
        with_component!(screen, S => S::shown(self))
    }

    /// The selection moved: the shown screen asks for what it shows of the instance.
    pub(super) fn selection_moved(&mut self) -> Vec<Cmd> {
        with_component!(self.screen, S => S::selection_moved(self))
    }

    /// An action of the key map: navigation is the `App`'s, the keys every screen shares go to
    /// the work they start, and the rest to the screen shown, whose scope of the key table they
    /// come from (this match names every action, so a new one cannot be forgotten).
    pub(super) fn on_action(&mut self, a: Action) -> Vec<Cmd> {
        match a {
            Action::Quit
            | Action::Help
            | Action::Back
            | Action::ScreenInstances
            | Action::ScreenDescriptor
            | Action::ScreenSnapshots
            | Action::ScreenReplay
            | Action::ScreenTune
            | Action::OpenTune
            | Action::ScreenProfile
            | Action::NextScreen
            | Action::PrevScreen
            | Action::Open => self.on_navigation_action(a),
            // Global keys: whichever screen is shown, they replay, cancel or profile.
            Action::Replay | Action::Verify | Action::Cancel => ReplayScreen::on_action(self, a),
            // `P` on the tuning screen profiles the row picked there: the Profile screen's work.
            Action::Profile | Action::ProfileBest => ProfileScreen::on_action(self, a),
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom
            | Action::Filter
            | Action::Sort
            | Action::ReverseSort
            | Action::RawNames
            | Action::Mark
            | Action::TextDiff
            | Action::MarkSweep
            | Action::TuneStartMarked
            | Action::NextDiff
            | Action::PrevDiff
            | Action::Goto
            | Action::CyclePair
            | Action::CycleType
            | Action::CycleTypeBack
            | Action::Search
            | Action::SearchNext
            | Action::SearchPrev
            | Action::PickType
            | Action::Endian
            | Action::Squeeze
            | Action::EditRepetitions
            | Action::EditGrid
            | Action::EditBlock
            | Action::EditTolerance
            | Action::EditCandidate
            | Action::EditImage
            | Action::EditBaseAddress
            | Action::Freeze
            | Action::Export
            | Action::TuneStart
            | Action::TuneCancel
            | Action::TuneEdit
            | Action::TuneExport
            | Action::HeatLeft
            | Action::HeatRight
            | Action::HeatAxes
            | Action::TuneFront
            | Action::TunePickUp
            | Action::TunePickDown
            | Action::ProfileCancel
            | Action::ProfileCandidate => self.on_screen_action(a),
        }
    }

    /// The shown screen's own keys and its moving keys, handed to its component.
    fn on_screen_action(&mut self, a: Action) -> Vec<Cmd> {
        with_component!(self.screen, S => S::on_action(self, a))
    }

    /// Quitting, help, going back, switching screens, scrolling and opening the selection.
    fn on_navigation_action(&mut self, a: Action) -> Vec<Cmd> {
        match a {
            Action::Quit => return self.quit_all(),
            Action::Help => {
                self.help = true;
                self.help_scroll = 0;
            }
            Action::Back => {
                if !self.instances.filter.is_empty() && self.screen == Screen::Instances {
                    self.instances.filter.clear();
                    self.refresh_view();
                } else if self.screen != Screen::Instances {
                    self.screen = Screen::Instances;
                } else if self.picker.is_some() {
                    return self.back_to_picker();
                }
                self.status = None;
            }
            Action::ScreenInstances => return self.switch(Screen::Instances),
            Action::ScreenDescriptor => return self.switch(Screen::Descriptor),
            Action::ScreenSnapshots => return self.switch(Screen::Snapshots),
            Action::ScreenReplay => return self.switch(Screen::Replay),
            Action::ScreenTune | Action::OpenTune => return self.switch(Screen::Tune),
            Action::ScreenProfile => return self.switch(Screen::Profile),
            Action::NextScreen | Action::PrevScreen => {
                let n = Screen::ALL.len();
                let i = Screen::ALL
                    .iter()
                    .position(|&s| s == self.screen)
                    .unwrap_or(0);
                let j = if a == Action::NextScreen {
                    (i + 1) % n
                } else {
                    (i + n - 1) % n
                };
                return self.switch(Screen::ALL[j]);
            }
            Action::Open if self.current().is_none() => {
                let why = if self.rows.is_empty() {
                    "no instance to open here"
                } else {
                    "no instance to open: the filter matches none (/ to change it)"
                };
                self.set_status(why.to_string(), true);
            }
            Action::Open => return self.switch(Screen::Snapshots),
            _ => {}
        }
        vec![]
    }

    /// `M`: mark or unmark the selection for a sweep of several instances.
    pub(super) fn toggle_sweep_mark(&mut self) {
        let Some(i) = self.current() else { return };
        if !self.tune.marks.remove(&i) {
            self.tune.marks.insert(i);
        }
        let n = self.tune.marks.len();
        self.set_status(
            format!("{n} instance(s) marked for a sweep (●): R on the tuning screen sweeps them one after the other"),
            false,
        );
    }

    /// `R`: the kernels' names as recorded (mangled), or readable, on the list and the
    /// descriptor.
    pub(super) fn toggle_raw_names(&mut self) {
        self.raw_names = !self.raw_names;
        let names = if self.raw_names {
            "raw (mangled) kernel names"
        } else {
            "demangled kernel names"
        };
        self.set_status(names, false);
    }

    /// `m`: mark the selection for the descriptor screen's comparison with the selection (or
    /// clear the mark).
    pub(super) fn toggle_mark(&mut self) -> Vec<Cmd> {
        self.mark = if self.mark == self.current() {
            None
        } else {
            self.current()
        };
        let cmds = DescriptorScreen::inspect_selection(self);
        let text = match self.mark {
            Some(i) => format!(
                "marked {}: the descriptor screen compares it with the selection",
                self.rows[i].json_file
            ),
            None => "mark cleared".into(),
        };
        self.set_status(text, false);
        cmds
    }
}
