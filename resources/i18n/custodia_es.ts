<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="es">
<context>
    <name>AboutDialog</name>
    <message>
        <source>About Custodia</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;h2&gt;Custodia {0}&lt;/h2&gt;&lt;p&gt;Four offline AI assistants. Every datum lives where its loss is survivable.&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AuditTableModel</name>
    <message>
        <source>Seq</source>
        <extracomment>the line before the stored record text in the detail view emitted when a page arrived (tests wait on it) a page could not be read: the message</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time (UTC)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Event</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pseudonym</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fields</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hash</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>— missing —</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>erased</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>sealed</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>CodeBlock</name>
    <message>
        <source>code</source>
        <extracomment>streamed tokens are re-rendered at most this often (a long answer is parsed once per tick) a code block taller than this many lines scrolls</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy this code to the clipboard</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copied</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ComingSoonTab</name>
    <message>
        <source>&lt;h2&gt;{0}&lt;/h2&gt;&lt;p&gt;Coming in the next release ({1}).&lt;/p&gt;&lt;p&gt;This assistant is not available yet; nothing here stores or answers anything.&lt;/p&gt;</source>
        <extracomment>(objectName, title, SPEC ids, module or None while the assistant has not landed)</extracomment>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ConversationsTab</name>
    <message>
        <source>Checking encryption…</source>
        <extracomment>a message or code block was copied from the transcript (its text) this tab&apos;s service, built on first use (only ever inside a worker job) the conversation being answered (None until a new one&apos;s first message is saved) confirmed for deletion while its answer streamed: deleted once the answer stopped set by Stop: the answer ends, what was said is saved (marked stopped) the message being sent until it is on disk (given back if the turn fails before) what each running job is doing, for ``tab_activity`` (id of its handle → text) the last search, re-run when a rename, delete or import may have changed its hits names of conversations opened from a search hit (said if the file is gone) the messages shown in the transcript (index → text), for their Copy links the conversation on screen, drawn again when the theme changes answers of this session checked against past conversations (CT9), by (conversation id, message index): their sentences are shown marked</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Set key…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start a new history…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The key is lost? Keep the encrypted conversations as they are (locked) and go on with a new history</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rename</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Date</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Messages</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search past conversations…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Import…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This conversation…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All conversations…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rebuild index</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete the search index and rebuild it from the conversation files</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Write a message and press Enter…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start a new history</source>
        <extracomment>what the tab is waiting for, shown once a job has run for ACTIVITY_DELAY_MS</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New encrypted history…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Continue unencrypted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading conversations…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} conversation(s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Updating the search index…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading the list…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unexpected error (see the log): </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search is off: {0} Use “Rebuild index” to re-embed with the current model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Locked: part of an earlier history (key id {0}), kept untouched. Give its key or passphrase in “Set key…” to read it again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} (locked)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot be read: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>⚠ &lt;b&gt;History is encrypted with a passphrase and locked.&lt;/b&gt; Enter the passphrase in “Set key…” (or set CONVERSATIONS_PASSPHRASE) to read it and add to it — or “Start a new history…” and keep it as it is.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>⚠ &lt;b&gt;History is encrypted and locked.&lt;/b&gt; Give its key in “Set key…” (or CONVERSATIONS_KEY) to read it and add to it — or, if the key is lost, “Start a new history…” and keep it as it is.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>⚠ &lt;b&gt;History is stored in clear text.&lt;/b&gt; Anyone who can read your files can read your conversations. Set a key to encrypt it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>✓ History encrypted (key from CONVERSATIONS_KEY, id {0}).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>✓ History encrypted (key in the OS keyring, id {0}).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>✓ History encrypted with a key derived from your passphrase (id {0}); the key is never stored: the passphrase is asked at each start.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>✓ History encrypted (key derived from CONVERSATIONS_PASSPHRASE, id {0}).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>⚠ History encrypted, but the key is kept &lt;b&gt;for this session only&lt;/b&gt; ({0}): after a restart the history is locked. Copy the key and set CONVERSATIONS_KEY, or use a passphrase in “Set key…” (it needs no keyring).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>⚠ {0} conversation(s) still stored in clear: “Set key…” encrypts them.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>⚠ A key change is unfinished (new key id {0}): give that key in “Set key…” to resume it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} conversation(s) cannot be read (marked ⚠).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} conversation(s) of an earlier history are locked, kept untouched (key id {1}): give that key or passphrase in “Set key…” to read them again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New messages are refused:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Answering…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Thinking…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Answered by {0}:{1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopped: what was said is kept (marked stopped).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Retrieval-only mode: showing what was found, no generated text.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>({0} passage(s) from past conversations)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Past conversations not searched: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>You</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copied to the clipboard.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>from “{0}” ({1}), {2}: {3}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not from your past conversations</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>✓ [n]: past message n says it (named under the answer; click ✓ to see it whole) · in grey italics: the assistant&apos;s own words, {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>System</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tool</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Opening the conversation…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>“{0}” cannot be opened: {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>stopped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>“{0}” cannot be read: {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>“{0}” no longer exists (deleted outside this tab?).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Your next message starts a new conversation.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Renaming…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select a conversation to delete.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>“{0}” is deleted as soon as its answer has stopped.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete “{0}”? Its file is removed; this cannot be undone.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Its answer is still being written: it is stopped first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopping the answer, then deleting “{0}”…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>this conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Deleted “{0}”.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Deleting…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Searching past conversations…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing found.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} message(s) found</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not searched: conversations that cannot be read ({0}; marked ⚠).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rebuilding the search index…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search index rebuilt: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Deriving the key from the passphrase…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Re-encrypting conversations…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Your {0} encrypted conversation(s) cannot be opened without their key. Start a new history? They are kept exactly as they are, listed as locked, and readable again whenever you give their key or passphrase.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>“Continue unencrypted” stores new conversations in clear text: anyone who can read your files can read them.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Starting a new history…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Conversations (*.json *.zip)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Importing…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a conversation to export it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exporting…</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>DoctorDialog</name>
    <message>
        <source>Stores and models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>
Everything this configuration needs is usable.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>
Some stores or models this configuration needs are not usable.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>InspectorPane</name>
    <message>
        <source>Pseudonym (p-…)</source>
        <extracomment>the view is ready (after opening or applying filters); tests wait on it verification finished: the :class:`VerifyResult` an export finished: the number of records the detail view shows a record</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Any event</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>From</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Filter</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show all</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pseudonym</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Event</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>to</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select a record to see it in full.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Verify</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Recompute every hash and check the signed checkpoints</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Only since the last checkpoint</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not verified yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export CSV…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export JSONL…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>With questions and answers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>For an authorised reviewer: the export also holds each record&apos;s decrypted fields (what was asked and the answer shown). The disclosure is recorded in the audit log.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loading the audit log…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} in {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} match the filters ({1})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Audit log unavailable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unexpected error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Some records could not be read: {0} (Refresh to try again)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sequence number {0} is missing from the log: the record was deleted.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This is the first broken link.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Verifying…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chain intact: {0} ({1} verified since the checkpoint at seq {2})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chain intact: {0} verified in {1:.2f} s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Broken at seq {0}: {1} — {2}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Verification failed: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Verification cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export the audit log</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CSV files (*.csv)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>JSON lines (*.jsonl)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export decrypted questions and answers?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The file will hold, in clear, what each person asked and the answer they were shown. Export it only if you are authorised to read it, and keep it safe. The export is recorded in the audit log.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exporting to {0}…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exported {0} to {1}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>KeyDialog</name>
    <message>
        <source>Start a new encrypted history</source>
        <extracomment>column 0 of a locked conversation (an earlier history set aside): True a search hit&apos;s conversation name, for messages after it is gone a job running longer than this shows what the tab is waiting for (``tab_activity``) who wrote a message, readable on the light and on the dark palette the link of an answer&apos;s ✓ [n] mark: ``source:&lt;message index&gt;:&lt;n&gt;`` a context passage as the agent gives it to the model: &quot;[name, date] role: text&quot; the current conversation&apos;s name after a rename (tidied by the agent) None when the file is gone (deleted outside this tab): ``conversation_id`` says which why it cannot be opened now (damaged, wrong key since it was listed), else &quot;&quot; &quot;3 wrong key&quot;...: conversations that could not be read, so were not searched a refresh of shown hits (after a rename...): the status line is left as it is set when the index belongs to another embedder: the user is offered a rebuild</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Conversations key</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Your {0} encrypted conversation(s) are kept exactly as they are, listed as &lt;b&gt;locked&lt;/b&gt;; give their key or passphrase here later to read them again. New conversations go to a new history under the key or passphrase you set now.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every conversation&apos;s history will be re-encrypted with this key (Fernet), or with a key derived from a passphrase. Keep a copy: without it the history cannot be read. An interrupted change resumes when you give the same key again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;No OS keyring is available&lt;/b&gt; ({0}): a key typed or generated here is kept &lt;b&gt;for this session only&lt;/b&gt; — after a restart your conversations are locked until you set CONVERSATIONS_KEY to it. &lt;b&gt;A passphrase needs no keyring&lt;/b&gt;: you type it again at each start.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Passphrase</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Key</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a few words you will remember</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Passphrase:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Set a new passphrase (re-encrypts every conversation)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the same passphrase again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Again:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fernet key (44 characters)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Generate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy the key to the clipboard (keep it somewhere safe)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show the key</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy this key now and keep it safe: without an OS keyring it is kept for this session only (set CONVERSATIONS_KEY to it for the next start), or choose Passphrase instead.</source>
        <extracomment>a generated key without a keyring: copy it now (session only otherwise)</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copied</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>check it for a typo: an unfinished key change waits for its key (key id {0})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>check it for a typo: it must be the key your conversations are encrypted with (a new key from Generate would not open them)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>check it for a typo, or press Generate to make a new one</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enter the key of the unfinished key change (key id {0}).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enter the key your conversations are encrypted with.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enter a key, or press Generate to make a new one.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This is not a Fernet key ({0}): {1}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A key change to key id {0} is unfinished: give that key to resume it (this key has id {1}). Another key can be set once it is done.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enter the passphrase.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A passphrase needs at least {0} characters (a few words are easier to remember and harder to guess).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The two passphrases differ: type the same one twice.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>To set another passphrase, tick “{0}”.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Deriving the key from the passphrase (about half a second)…</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>{0} (loading…)</source>
        <extracomment>narrow enough for a 900-px-wide screen (window frame and a scroll bar included) jobs a quit would end (name prefix -&gt; what the user is told); the rest are background reads that a quit loses nothing by stopping whose service is built by which assistant package&apos;s ``get_service`` (imported on first use: the audit service&apos;s package, for one, is not needed before the inspector opens) emitted once the start-up checks finished: the list of :class:`doctor.Check` the audit service, for the inspector (built when it first loads the log) the user chose &quot;Quit anyway&quot; (or nothing was running): close without asking what the model lists offer (read in a worker: the models folders&apos; GGUF headers) assistant -&gt; (what it answers with, why/details) for the status bar</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Custodia</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Profile: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chat: {0} (loading…)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Embedder: {0} (loading…)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Checking stores…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Settings…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Audit &amp;inspector</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Storage map</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Theme</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;System</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Light</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Dark</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Tools</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Check stores and &amp;models…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Models…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;User guide</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Keyboard shortcuts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;About Custodia</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chat: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chat: retrieval-only mode</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chat: unavailable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Embedder: {0} ({1}-d)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Embedder: unavailable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Problems:&lt;/b&gt; {0} — see Tools ▸ Check stores and models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All stores and models ready</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Start-up checks failed:&lt;/b&gt; {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0}: {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quit Custodia?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Custodia is working: {0}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quitting stops it; a multi-agent session can be resumed at the next start.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quit anyway</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keep running</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} task(s) running</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopping {0} task(s)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Custodia is still working</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Some work did not stop in 30 s. Quit anyway?</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MemoriesTab</name>
    <message>
        <source>Memories: undo the last change</source>
        <extracomment>this tab&apos;s service, built on first use (only ever inside a worker job) which model it answers with (none: no picker; it keeps the model it was built with) the exchange whose question is being edited (it and what follows are greyed)</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Memories: delete the selected memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tell me about yourself and ask me anything: I recall what you told me before, even in another session. “Remember that …” stores a fact; every message has a Remember button.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Message (Enter to send)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel edit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keep the conversation as it was (Esc)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Memories used by the last answer&lt;/b&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Similarity</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Memories&lt;/b&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loading memories…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Re-embed all</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Give every memory a vector of the current embedder so all are searched</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search memories…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New memory…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Undo</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Undo the last change to the memories (Ctrl+Z)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The memories cannot be opened: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Source: {0} · updated {1} · {2}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unknown model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not searched until re-embedded ({0}-d, {1})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>1 memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} memories</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} · recall at similarity ≥ {1:.2f} ({2})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Something went wrong (see the log): {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Thinking…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No memory reached similarity {0:.2f}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>recall is limited until the memories are re-embedded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>[stopped]</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>[No answer: {0}]</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Editing a question: Enter sends it in place of the greyed messages; Esc keeps them.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copied to the clipboard.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Memories used to answer&lt;/b&gt; “{0}”</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A very similar memory exists: “{0}” ({1:.2f}). Update it or keep both?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Already remembered: “{0}”</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Updated: “{0}” → “{1}”</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remembered: “{0}”</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Deleted “{0}”. Undo brings it back (Ctrl+Z).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Undo {0} (Ctrl+Z)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Undone: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} of {1} re-embedded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Re-embedded {0} memories: all are searched again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Re-embedding stopped; what was done is kept. Recall stays limited until it finishes.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MessageBubble</name>
    <message>
        <source>Remember</source>
        <extracomment>a theme switch reaches a widget as one of these memories shown in the list without a search (the rest are one search away) where a memory&apos;s own text is kept on its list item (the shown text may add a similarity) the link of a ✓ [n] mark: memory n of the memories used (1-based) a ✓ [n] mark was clicked: memory n (1-based) of this answer&apos;s memories used</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Store this message as a memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Memories used:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not from your memories</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>✓ [n]: stated by memory n of the memories used (click to select it)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>✓ [n]: a memory used says it (click to see which) · in grey italics: the assistant&apos;s own words, {0}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MessageView</name>
    <message>
        <source>You</source>
        <extracomment>Copy (message or code block) put this text on the clipboard</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy the message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edit this message and send it again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ask the same question again</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MigrationDialog</name>
    <message>
        <source>Migrate to server</source>
        <extracomment>the dry run finished (the plan) — tests wait for it the migration ended (done, failed or cancelled): the map is worth measuring again</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copies the embedded data in {0} to the servers configured in Settings. Nothing embedded is deleted; if the copy is interrupted or cancelled, run it again to resume.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Datum</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Action</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>From</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>To</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Items</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>State</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>What happens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>only if the audit schema must be created (default: the configured DSN)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Postgres admin DSN</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Switch to the server profile when done (at restart)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Migrate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Close</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dry run: reading the embedded stores…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dry run — nothing has been written.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>An unfinished migration to these servers will be resumed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Problems (fix them, then try again):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} item(s) to copy or rebuild.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The migration cannot start: see the problems above.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Migrating…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Migration finished.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Done: every step finished (details above).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing was read or changed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot plan a migration: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopped: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Try again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelled. Nothing embedded was touched; Migrate again to resume.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resume</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ModelPicker</name>
    <message>
        <source>Model:</source>
        <extracomment>what the status line says of an assistant&apos;s model before it is loaded (assistant, short text, tooltip) once the chosen model is loaded or refused the newest listing asked for: an older one that ends later is dropped</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Set by {0} in the environment for this session.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model this assistant answers with (saved in custodia.toml)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>loading {0}…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>retrieval-only — {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ready</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not saved</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not loaded — {0}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ModelsDialog</name>
    <message>
        <source>Models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add model file…</source>
        <extracomment>the newest listing asked for: an older one that ends later is dropped what the last add did (kept above the count when the list is read again)</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy (or link) a .gguf file into the models folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Also list the .gguf files of a folder you keep models in</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel copy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading the models folders…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GGUF files in: {0}
This machine: {1} of memory available of {2}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} model file(s). Pick one for an assistant in its tab or in Settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No model files yet: add a .gguf file (an instruction-tuned one, e.g. &apos;…-Instruct-Q4_K_M.gguf&apos;) or a folder that holds some.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not a GGUF file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>truncated: copy it again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GGUF version not supported</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no chat template: cannot chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>architecture not supported</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>too large: needs {0}, {1} available</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ready</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>yes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} at {1} tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not read the models folders: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add model file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GGUF models (*.gguf)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy {0} into the models folder, or link it where it is (no copy; moving or deleting the original breaks the link)?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Link</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Linking {0}…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copying {0}…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Added {0}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not added — {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy cancelled; nothing was added.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add a models folder</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MultiAgentTab</name>
    <message>
        <source>Describe a task for the team (planner, coder, researcher, reviewer)…</source>
        <extracomment>a theme switch reaches a widget as one of these how long the feed worker waits per poll: it notices cancellation within this time memory hits fetched per search (those under the recall threshold are then hidden) the health layers in the user&apos;s words (the service&apos;s keys name the engine layers, which stay in the tooltip and the CLI) the list, read after the run ended, with the filter it was read with a run ended and its final state is drawn: session id, final phase (for testers) the session list was (re)loaded: number of rows a run was refused, nothing touched (another process runs it): session id, message the result was written to this file the semantic memory&apos;s search index (HNSW) was built: how many collections this tab&apos;s service, built on first use (only ever inside a worker job) which model it answers with (none: no picker; it keeps the model it was built with) the task of the session running (or about to run), for the Cancel tooltip a new session is being created (Run or Enter pressed, no session yet) live events of the running session by seq, also while another session is shown the session ``multiagent_notice`` talks about the session the user asked to see last (shown, or being loaded) the semantic memory&apos;s HNSW build (a background job; yields to a run) sessions running here or elsewhere, or interrupted (from the backend) the result pane&apos;s session and its Markdown (Copy and Export use it)</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resume</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Continue the selected unfinished session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Opening the session store…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Sessions&lt;/b&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reload the list (sessions run elsewhere, e.g. from a terminal)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All phases</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Started</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Phase</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Task</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Live feed&lt;/b&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Result&lt;/b&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy the result as Markdown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save the result as a Markdown file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The final answer, assembled from the steps, appears here when a run ends.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Tickets&lt;/b&gt; (kept only until they expire)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Held by</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Expires in</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Semantic memory&lt;/b&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search past results, code, sessions…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Re-embed all</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rebuild the semantic memory with the configured embedder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>planning</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>working</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>reviewing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>done</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Phase: no session selected</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>interrupted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Phase: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>pid {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;i&gt;(running in another Custodia process {0})&lt;/i&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stores: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every layer works.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel the running session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel this session: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Another session is running: {0}. Select it in the list to cancel it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A session is running: one at a time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run the task</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Another Custodia process is running this session ({0}); wait for it to finish, or stop it, then Refresh</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The embedding model changed: the semantic memory must be re-embedded before it can be searched or used by the experts.
{0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} item(s) remembered ({1}).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Building the search index of the semantic memory: {0} of {1}…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} (interrupted)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} (running in another process, pid {1})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Live feed&lt;/b&gt; — loading the session…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>That session is not in any reachable store.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Live feed&lt;/b&gt; — {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Result so far&lt;/b&gt; ({0})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Result&lt;/b&gt; — copied to the clipboard</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export the result as Markdown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Result&lt;/b&gt; — saved to {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>session started</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>phase</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>result</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ticket</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>warning</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>finished</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Live feed unavailable: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Type a task first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Running: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>“{0}”</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The session {0} stopped: {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The session stopped: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The session {0} was cancelled. Resume continues where it stopped.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelled. Resume continues where it stopped.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The session “{0}” ended: {1}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>open</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>in review</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>closed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ticket {0}, handed by {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expired</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Searching the semantic memory…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing related is remembered yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing similar (similarity ≥ {0:.2f}); {1} weaker match(es) hidden.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} weaker match(es) below similarity {1:.2f} hidden.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Memory search failed: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel re-embedding</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Re-embedding: {0} of {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Re-embedding cancelled; the memory is as it was.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ProposalRow</name>
    <message>
        <source>Update “{0}” to “{1}”? (similarity {2:.2f})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remember “{0}”?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Update</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remember</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keep both</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <source>Settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Data dir: {0}
Each store is chosen on its own; &apos;server&apos; makes a store use its server when a URL is set. Environment variables override this file.</source>
        <extracomment>``models.&lt;assistant&gt;`` and ``generation.&lt;assistant&gt;.&lt;setting&gt;`` -&gt; its widget what the model lists offer (the models folders are read by the caller, in a worker)</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stores</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Profile</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sessions, tickets, feed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Audit log</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Graph</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Redis URL</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Postgres DSN</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Neo4j URI</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Neo4j user</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Qdrant URL (empty: local)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chroma URL (empty: local)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Embedder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every assistant&apos;s model unless it has its own below (gguf:&lt;path or name&gt;, ollama:&lt;model&gt;, openai:&lt;model&gt; can be typed)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chat model (default)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ollama URL</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>OpenAI-compatible URL</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Network timeout (s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Assistants: model and generation settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tutor</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Memories</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Conversations</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Multi-agent</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Empty: the default chat model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Set by {0} in the environment; the file keeps its own value.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model (empty: the default)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Max tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>as asked</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context size (tokens)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Threads</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>automatic</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Repeat penalty</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Added after the assistant&apos;s own instructions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not saved — {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not saved — cannot write the file: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Saved. Restart Custodia to use the new stores and models; nothing stored is lost by switching.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Settings saved</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ShortcutsDialog</name>
    <message>
        <source>Keyboard shortcuts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Action</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shortcut</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>StorageMapView</name>
    <message>
        <source>Profile &lt;b&gt;{0}&lt;/b&gt; — data dir {1}</source>
        <extracomment>a pale background per durability class (the seed&apos;s three answers) emitted after each refresh with the rows shown (tests wait for it)</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Datum</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Engine now</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Class</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Items</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Size</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Health</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>If it is lost</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>If this datum is lost, what happens? &lt;b&gt;recomputable&lt;/b&gt;: it is recomputed (a cache, a derived index) · &lt;b&gt;history&lt;/b&gt;: history is lost (SQLite, JSON files: back them up) · &lt;b&gt;provable&lt;/b&gt;: I could no longer prove nobody touched it (the hash-chained audit log and its checkpoints)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Migrate to server…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy the embedded data to the servers configured in Settings (a dry run first shows what will be copied or rebuilt; nothing embedded is deleted)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Measuring the stores…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} store(s) need attention: {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every store is readable.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Where: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not measure the stores: {0}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>TutorTab</name>
    <message>
        <source>User:</source>
        <extracomment>the knowledge base is indexed and questions can be asked (the :class:`Status`) a turn was answered, shown and audited (the :class:`Turn`) an import finished (the :class:`ImportReport`) this tab&apos;s service, built on first use (only ever inside a worker job) which model it answers with (none: no picker; it keeps the model it was built with) this thread&apos;s earlier turns, rendered (newest last); New thread clears it what the thread&apos;s last question was understood as, and whose it was: the next question of the same user may follow it up (another user&apos;s never does: their words would be searched, shown and sealed in this user&apos;s record)</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Who is asking: the shared notes and this user&apos;s own notes are searched</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The knowledge base is indexed when first shown.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Import notes…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add your own Markdown or text notes to this user&apos;s scope</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open inspector</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Review the audit log of every turn</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>For study, not for clinical decisions.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ask a study question. Answers cite their notes: click a citation to read it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Question (Enter to ask)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ask</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New thread</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Clear the earlier questions from view (every turn stays in the audit log)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Sources&lt;/b&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>#</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Note</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Found by</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The selected passage appears here.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Entities around the question&lt;/b&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Indexing the study notes…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The knowledge base could not be opened: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} notes · {1} passages · {2} entities</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>vectors unavailable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>graph: {0} relations</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>graph unavailable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Searching your notes…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Found {0} passages; checking what they say…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model is drafting an answer. It is checked against your notes before it is shown: what they do not support is not shown as fact.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopped; recorded in the audit log as #{0}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Recorded in the audit log as #{0}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sources</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Passages searched — none of them answers this question</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model&apos;s own answer — not shown as fact ({0})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unsupported by your notes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>supported</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Degraded retrieval: the graph is unavailable, so answers come from vector and keyword retrieval only (hover for details).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Degraded retrieval: {0} unavailable, so answers come from the other retrieval methods only (hover for details).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Something went wrong (see the log): {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not answered: the turn was not recorded, so nothing is shown.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopped.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopping… (the turn is still recorded)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Source: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Found by: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No known entity in this question.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} — {1}: together in {2} passages</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Import notes for {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Notes (*.md *.markdown *.txt)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot read {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>skipped {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing was imported for {0}: {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Imported for {0}: {1}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>UserGuideDialog</name>
    <message>
        <source>Custodia user guide</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The user guide ({0}) is not installed with this copy of Custodia.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>WelcomeBanner</name>
    <message>
        <source>&lt;b&gt;Welcome to Custodia.&lt;/b&gt; Four assistants that run on this computer; nothing leaves it.&lt;ul style=&apos;margin:2px 0&apos;&gt;{0}&lt;/ul&gt;Help ▸ User guide explains more; Help ▸ Keyboard shortcuts lists the keys.</source>
        <extracomment>tab objectName -&gt; what it is for (shown in the welcome and the user guide)</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Got it</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>doctor</name>
    <message>
        <source>○ Ollama: not used by this configuration (optional; none running at {0})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>○ {0}: optional, not in use — {1}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>startup</name>
    <message>
        <source>Custodia: configuration error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The configuration cannot be used:

{0}

Fix custodia.toml or the environment and start again.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>widget</name>
    <message>
        <source>code</source>
        <extracomment>a code block&apos;s Copy was clicked: the code</extracomment>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>window</name>
    <message>
        <source>Audit inspector</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Storage map</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
