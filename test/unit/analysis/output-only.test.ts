/**
 * Targets whose only effect is output the tests may not compare (printed text, log records,
 * warnings) are dropped by the analysis, before any LLM call, with the rule `output-only`; a
 * target with any effect a test could see is kept.
 */
import { RepositoryAnalyzer, type FunctionEntry } from '../../../activities/analysis';

const SOURCES = {
  'events/handlers.py': `import logging

logger = logging.getLogger(__name__)


def report_event(event, verbose=False):
    """Tell the operator about an event."""
    if not verbose:
        return None
    label = "{}:{}".format(event.kind, event.name).upper()
    logger.info("event %s", label)
    print(f"[{label}] {len(event.payload)} bytes")


def print_banner(title, width=40):
    line = "=" * width
    print(line)
    print(title.center(width))
    print(line)


def record_event(event, journal):
    """Keep the event and say so."""
    journal.append(event.name)
    print("recorded", event.name)
    return None


def describe(event):
    print("describing", event.name)
    return len(event.name)


def count_event(event, totals):
    totals[event.kind] = totals.get(event.kind, 0) + 1
    logger.debug("counted %s", event.kind)
    return None


class EventPrinter:
    """Prints every event it is handed."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.logger = logging.getLogger("printer")

    def on_start(self, event):
        print(self.prefix, "start", event.name)

    def on_stop(self, event):
        self.logger.info("%s stop %s", self.prefix, event.name)

    def on_error(self, event, error):
        message = "{} failed: {}".format(event.name, error)
        print(self.prefix, message)
        return None


class EventTally:
    """Counts the events it is handed, and says so."""

    def __init__(self):
        self.started = 0
        self.stopped = 0

    def on_start(self, event):
        self.started += 1
        print("start", event.name)

    def on_stop(self, event):
        self.stopped += 1
        print("stop", event.name)

    def open_events(self):
        print("open")
        return self.started - self.stopped
`,
};

const rule = (fs: FunctionEntry[], qualname: string) => fs.find((f) => f.qualname === qualname)!.droppedBy;

describe('output-only targets are dropped before any LLM call', () => {
  it('drops a function that only prints and logs, whatever it returns early (None), and keeps one with an effect a test can see', () => {
    const fs = RepositoryAnalyzer.fromSources(SOURCES, { repoId: 'events', commit: 'c0' }).functions();
    expect(rule(fs, 'report_event')).toBe('output-only');
    // No return at all: the default rules' no-return comes first; without it, output-only.
    expect(rule(fs, 'print_banner')).toBe('no-return');
    expect(rule(RepositoryAnalyzer.fromSources(SOURCES, { repoId: 'events', commit: 'c0', rules: { requireReturn: false } }).functions(), 'print_banner')).toBe('output-only');
    // It changes its argument (journal.append), returns a value, or writes into a dict: kept.
    expect(rule(fs, 'record_event')).toBeNull();
    expect(rule(fs, 'describe')).toBeNull();
    expect(rule(fs, 'count_event')).toBeNull();
  });

  it("is never kept under RepoST's preset either (its no-return counts `return None` as none), and can be switched off", () => {
    const repost = RepositoryAnalyzer.fromSources(SOURCES, { repoId: 'events', commit: 'c0', preset: 'repost', split: 'train' }).functions();
    expect(rule(repost, 'report_event')).toBe('no-return');
    const off = RepositoryAnalyzer.fromSources(SOURCES, { repoId: 'events', commit: 'c0', rules: { noOutputOnly: false } }).functions();
    expect(rule(off, 'report_event')).toBeNull();
  });

  it('drops an event-handler class whose methods only print and log, and keeps one whose methods change its state', () => {
    const classes = RepositoryAnalyzer.fromSources(SOURCES, { repoId: 'events', commit: 'c0' }).classCandidates();
    const by = Object.fromEntries(classes.map((c) => [c.info.qualname, c.droppedBy]));
    expect(by.EventPrinter).toBe('output-only');
    expect(by.EventTally).toBeNull();
    const off = RepositoryAnalyzer.fromSources(SOURCES, { repoId: 'events', commit: 'c0', classRules: { noOutputOnly: false } }).classCandidates();
    expect(off.find((c) => c.info.qualname === 'EventPrinter')!.droppedBy).toBeNull();
  });
});
