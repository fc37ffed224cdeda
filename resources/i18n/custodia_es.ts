<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="es">
<context>
    <name>AboutDialog</name>
    <message>
        <source>not installed</source>
        <translation>no instalado</translation>
    </message>
    <message>
        <source>Profile</source>
        <extracomment>the rows of :func:`versions` that are words (the others are names of packages)</extracomment>
        <translation>Perfil</translation>
    </message>
    <message>
        <source>Data dir</source>
        <translation>Carpeta de datos</translation>
    </message>
    <message>
        <source>About Custodia</source>
        <translation>Acerca de Custodia</translation>
    </message>
    <message>
        <source>&lt;h2&gt;Custodia {0}&lt;/h2&gt;&lt;p&gt;Four assistants that run on this computer: a team that plans and reviews a task, a chat that remembers, your chat history, and a tutor for study notes. Nothing you write leaves this computer.&lt;/p&gt;&lt;p&gt;Your data is kept in {1}.&lt;/p&gt;</source>
        <translation>&lt;h2&gt;Custodia {0}&lt;/h2&gt;&lt;p&gt;Cuatro asistentes que funcionan en este equipo: un equipo que planifica y revisa una tarea, un chat que recuerda, tu historial de chat y un tutor para apuntes de estudio. Nada de lo que escribes sale de este equipo.&lt;/p&gt;&lt;p&gt;Tus datos se guardan en {1}.&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Details…</source>
        <translation>Detalles…</translation>
    </message>
</context>
<context>
    <name>AuditTableModel</name>
    <message>
        <source>Seq</source>
        <extracomment>text on the coloured rows above: dark on light in every theme (a dark theme&apos;s light text on these light backgrounds was unreadable) a person looked up by name: their pseudonym, or &quot;&quot; when the key store has none emitted when a page arrived (tests wait on it) a page could not be read: the message</extracomment>
        <translation>N.º</translation>
    </message>
    <message>
        <source>Time (UTC)</source>
        <translation>Hora (UTC)</translation>
    </message>
    <message>
        <source>Event</source>
        <translation>Evento</translation>
    </message>
    <message>
        <source>Pseudonym</source>
        <translation>Seudónimo</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>Estado</translation>
    </message>
    <message>
        <source>Fields</source>
        <translation>Campos</translation>
    </message>
    <message>
        <source>Hash</source>
        <translation>Hash</translation>
    </message>
    <message>
        <source>— missing —</source>
        <translation>— falta —</translation>
    </message>
    <message>
        <source>erased</source>
        <translation>borrado</translation>
    </message>
    <message>
        <source>sealed</source>
        <translation>sellado</translation>
    </message>
</context>
<context>
    <name>CodeBlock</name>
    <message>
        <source>code</source>
        <extracomment>streamed tokens are re-rendered at most this often (a long answer is parsed once per tick) a code block taller than this many lines scrolls an opening fence after words on the same line (&quot;Here it is: ```python&quot;), as small models write it: Markdown reads it as inline code and flattens the block onto one line a Markdown link or image: ``[text](target)`` / ``![alt](target)`` ``&lt;scheme:…&gt;`` and ``&lt;a@b&gt;`` autolinks what GitHub-flavoured Markdown turns into a link by itself: a scheme&apos;s colon, ``www.``, an e-mail address&apos;s ``@``
----------
a code block&apos;s Copy was clicked: the code</extracomment>
        <translation>código</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>Copiar</translation>
    </message>
    <message>
        <source>Copy this code to the clipboard</source>
        <translation>Copiar este código al portapapeles</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>Copiado</translation>
    </message>
</context>
<context>
    <name>ComingSoonTab</name>
    <message>
        <source>&lt;h2&gt;{0}&lt;/h2&gt;&lt;p&gt;Coming in the next release ({1}).&lt;/p&gt;&lt;p&gt;This assistant is not available yet; nothing here stores or answers anything.&lt;/p&gt;</source>
        <extracomment>a tab module&apos;s ``create``: it narrows the handle to its service&apos;s type (``Lazy.narrow``)</extracomment>
        <translation>&lt;h2&gt;{0}&lt;/h2&gt;&lt;p&gt;Llega en la próxima versión ({1}).&lt;/p&gt;&lt;p&gt;Este asistente aún no está disponible; aquí nada guarda ni responde nada.&lt;/p&gt;</translation>
    </message>
</context>
<context>
    <name>ConversationsTab</name>
    <message>
        <source>Checking encryption…</source>
        <extracomment>a key or a new history changed the list and the status: the tab shows them a key was used: locked search hits may be readable now, or the reverse</extracomment>
        <translation>Comprobando el cifrado…</translation>
    </message>
    <message>
        <source>Details</source>
        <extracomment>the cipher, key ids, the variables: for whoever needs them, out of the sentences</extracomment>
        <translation>Detalles</translation>
    </message>
    <message>
        <source>Set key…</source>
        <translation>Definir clave…</translation>
    </message>
    <message>
        <source>Start a new history…</source>
        <translation>Empezar un historial nuevo…</translation>
    </message>
    <message>
        <source>The key is lost? Keep the encrypted conversations as they are (locked) and go on with a new history</source>
        <translation>¿Se perdió la clave? Conserva las conversaciones cifradas tal como están (bloqueadas) y sigue con un historial nuevo</translation>
    </message>
    <message>
        <source>New</source>
        <extracomment>column 0 of a locked conversation (an earlier history set aside): True a search hit&apos;s conversation name, for messages after it is gone how many hits a search shows a conversation picked in the list (to open unless it is shown) a search hit picked: its conversation, at that message New: a new conversation in the chat the open conversation is being deleted: the chat starts a new one the conversation being answered is to be deleted: stop its answer first the list is to be read again, the status keeping this text a rename or delete changed the list: the tab shows it the last search, re-run when a rename, delete or import may have changed its hits names of conversations opened from a search hit (said if the file is gone)</extracomment>
        <translation>Nueva</translation>
    </message>
    <message>
        <source>Rename</source>
        <translation>Renombrar</translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation>Eliminar…</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Nombre</translation>
    </message>
    <message>
        <source>Date</source>
        <translation>Fecha</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Modelo</translation>
    </message>
    <message>
        <source>Messages</source>
        <translation>Mensajes</translation>
    </message>
    <message>
        <source>Search past conversations…</source>
        <translation>Buscar en conversaciones anteriores…</translation>
    </message>
    <message>
        <source>Import…</source>
        <extracomment>an import or export changed the list (or says what it did): the tab shows it conversations were imported: search hits may be stale</extracomment>
        <translation>Importar…</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>Exportar</translation>
    </message>
    <message>
        <source>This conversation…</source>
        <translation>Esta conversación…</translation>
    </message>
    <message>
        <source>All conversations…</source>
        <translation>Todas las conversaciones…</translation>
    </message>
    <message>
        <source>Rebuild index</source>
        <translation>Reconstruir índice</translation>
    </message>
    <message>
        <source>Delete the search index and rebuild it from the conversation files</source>
        <translation>Eliminar el índice de búsqueda y reconstruirlo a partir de los archivos de conversación</translation>
    </message>
    <message>
        <source>Model:</source>
        <extracomment>a message or code block was copied from the transcript (its text) the list is to be read again, the status saying this (an answer was saved...) a conversation was drawn: the list makes it current the file of a conversation being opened no longer exists (deleted elsewhere) a conversation could not be opened (its id, why) an answer ended, however (a conversation confirmed for deletion may go now) set by Stop: the answer ends, what was said is saved (marked stopped) the message being sent until it is on disk (given back if the turn fails before) the turn running answered from the history first (its draft streams after) the messages shown in the transcript (index → text), for their Copy links the conversation on screen, drawn again when the theme changes the model key the last message was sent to (conversation, message) whose withheld draft the user opened (folded otherwise) answers of this session checked against past conversations (CT9), by (conversation id, message index): their sentences are shown marked</extracomment>
        <translation>Modelo:</translation>
    </message>
    <message>
        <source>New conversation</source>
        <translation>Conversación nueva</translation>
    </message>
    <message>
        <source>Write a message and press Enter…</source>
        <translation>Escribe un mensaje y pulsa Intro…</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>Enviar</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Detener</translation>
    </message>
    <message>
        <source>Start a new history</source>
        <translation>Empezar un historial nuevo</translation>
    </message>
    <message>
        <source>New encrypted history…</source>
        <translation>Historial cifrado nuevo…</translation>
    </message>
    <message>
        <source>Continue unencrypted</source>
        <translation>Continuar sin cifrar</translation>
    </message>
    <message>
        <source>Delete conversation</source>
        <translation>Eliminar conversación</translation>
    </message>
    <message>
        <source>Reading conversations…</source>
        <extracomment>a message or code block was copied from the transcript (its text) this tab&apos;s service, built on first use (only ever inside a worker job)</extracomment>
        <translation>Leyendo las conversaciones…</translation>
    </message>
    <message numerus="yes">
        <source>%n conversation(s)</source>
        <translation>
            <numerusform>%n conversación</numerusform>
            <numerusform>%n conversaciones</numerusform>
        </translation>
    </message>
    <message>
        <source>Locked: part of an earlier history, kept untouched. Give its key or passphrase in “Set key…” to read it again.</source>
        <translation>Bloqueada: forma parte de un historial anterior y se conserva intacta. Indica su clave o frase de contraseña en «Definir clave…» para volver a leerla.</translation>
    </message>
    <message>
        <source>⚠ &lt;b&gt;History is encrypted with a passphrase and locked.&lt;/b&gt; Enter the passphrase in “Set key…” to read it and add to it — or “Start a new history…” and keep it as it is.</source>
        <translation>⚠ &lt;b&gt;El historial está cifrado con una frase de contraseña y bloqueado.&lt;/b&gt; Escribe la frase de contraseña en «Definir clave…» para leerlo y ampliarlo, o elige «Empezar un historial nuevo…» y consérvalo tal como está.</translation>
    </message>
    <message>
        <source>⚠ &lt;b&gt;History is encrypted and locked.&lt;/b&gt; Give its key in “Set key…” to read it and add to it — or, if the key is lost, “Start a new history…” and keep it as it is.</source>
        <translation>⚠ &lt;b&gt;El historial está cifrado y bloqueado.&lt;/b&gt; Indica su clave en «Definir clave…» para leerlo y ampliarlo o, si se perdió la clave, elige «Empezar un historial nuevo…» y consérvalo tal como está.</translation>
    </message>
    <message>
        <source>✓ History encrypted (the key is given when Custodia starts).</source>
        <translation>✓ Historial cifrado (la clave se indica al iniciar Custodia).</translation>
    </message>
    <message>
        <source>✓ History encrypted (the key is kept in this computer&apos;s keyring).</source>
        <translation>✓ Historial cifrado (la clave se guarda en el llavero de este equipo).</translation>
    </message>
    <message>
        <source>✓ History encrypted with a key derived from your passphrase; the key is never stored: the passphrase is asked at each start.</source>
        <translation>✓ Historial cifrado con una clave derivada de tu frase de contraseña; la clave nunca se guarda: la frase se pide en cada inicio.</translation>
    </message>
    <message>
        <source>✓ History encrypted with a key derived from your passphrase (given when Custodia starts).</source>
        <translation>✓ Historial cifrado con una clave derivada de tu frase de contraseña (indicada al iniciar Custodia).</translation>
    </message>
    <message>
        <source>⚠ History encrypted, but the key is kept &lt;b&gt;for this session only&lt;/b&gt; (this computer has no keyring to keep it in): after a restart the history is locked until you give the key again. A passphrase in “Set key…” needs no keyring.</source>
        <translation>⚠ Historial cifrado, pero la clave se guarda &lt;b&gt;solo durante esta sesión&lt;/b&gt; (este equipo no tiene llavero donde guardarla): tras reiniciar, el historial queda bloqueado hasta que vuelvas a indicar la clave. Una frase de contraseña en «Definir clave…» no necesita llavero.</translation>
    </message>
    <message>
        <source>⚠ A key change is unfinished: give its new key in “Set key…” to finish it.</source>
        <translation>⚠ Hay un cambio de clave sin terminar: indica su clave nueva en «Definir clave…» para terminarlo.</translation>
    </message>
    <message>
        <source>1 conversation cannot be read (marked ⚠).</source>
        <translation>1 conversación no se puede leer (marcada con ⚠).</translation>
    </message>
    <message>
        <source>{0} conversations cannot be read (marked ⚠).</source>
        <translation>{0} conversaciones no se pueden leer (marcadas con ⚠).</translation>
    </message>
    <message>
        <source>{0} conversation(s) of an earlier history are locked, kept untouched: give their key or passphrase in “Set key…” to read them again.</source>
        <translation>{0} conversación(es) de un historial anterior están bloqueadas y se conservan intactas: indica su clave o frase de contraseña en «Definir clave…» para volver a leerlas.</translation>
    </message>
    <message>
        <source>New messages are refused until then.</source>
        <translation>Hasta entonces se rechazan los mensajes nuevos.</translation>
    </message>
    <message>
        <source>{0} new, {1} dropped</source>
        <translation>{0} nuevos, {1} descartados</translation>
    </message>
    <message>
        <source>Updating the search index…</source>
        <translation>Actualizando el índice de búsqueda…</translation>
    </message>
    <message>
        <source>Reading the list…</source>
        <translation>Leyendo la lista…</translation>
    </message>
    <message>
        <source>Nothing was written: your history is locked. Give its key or passphrase in “Set key…”, or start a new history.</source>
        <extracomment>a job running longer than this shows what the tab is waiting for (``tab_activity``) what each running job is doing, for ``tab_activity`` (job number → text) what the tab is waiting for, shown once a job has run for ACTIVITY_DELAY_MS</extracomment>
        <translation>No se escribió nada: tu historial está bloqueado. Indica su clave o frase de contraseña en «Definir clave…», o empieza un historial nuevo.</translation>
    </message>
    <message>
        <source>Unexpected error (see the log): </source>
        <translation>Error inesperado (véase el registro): </translation>
    </message>
    <message>
        <source>Search is off: {0} Use “Rebuild index” to re-embed with the current model.</source>
        <translation>La búsqueda está desactivada: {0} Usa «Reconstruir índice» para recalcular los vectores con el modelo actual.</translation>
    </message>
    <message>
        <source>{0} (locked)</source>
        <translation>{0} (bloqueada)</translation>
    </message>
    <message>
        <source>Cannot be read: {0}</source>
        <translation>No se puede leer: {0}</translation>
    </message>
    <message>
        <source>⚠ &lt;b&gt;History is stored in clear text.&lt;/b&gt; Anyone who can read your files can read your conversations. Set a key to encrypt it.</source>
        <translation>⚠ &lt;b&gt;El historial se guarda sin cifrar.&lt;/b&gt; Cualquiera que pueda leer tus archivos puede leer tus conversaciones. Define una clave para cifrarlo.</translation>
    </message>
    <message>
        <source>⚠ {0} conversation(s) still stored in clear: “Set key…” encrypts them.</source>
        <translation>⚠ {0} conversación(es) todavía sin cifrar: «Definir clave…» las cifra.</translation>
    </message>
    <message>
        <source>Answering…</source>
        <extracomment>the row&apos;s input box (what is sent, and what a failed turn gives back)</extracomment>
        <translation>Respondiendo…</translation>
    </message>
    <message>
        <source>Thinking…</source>
        <translation>Pensando…</translation>
    </message>
    <message>
        <source>Answered from your conversations.</source>
        <translation>Respondido a partir de tus conversaciones.</translation>
    </message>
    <message>
        <source>(The model is rephrasing; shown only if every sentence checks out.) </source>
        <translation>(El modelo está reformulando; solo se muestra si cada frase se comprueba.) </translation>
    </message>
    <message>
        <source>Answered by {0}</source>
        <translation>Respondido por {0}</translation>
    </message>
    <message>
        <source>Stopped: what was said is kept (marked stopped).</source>
        <translation>Detenido: lo dicho se conserva (marcado como detenido).</translation>
    </message>
    <message>
        <source>Retrieval-only mode: showing what was found, no generated text.</source>
        <translation>Modo solo recuperación: se muestra lo encontrado, sin texto generado.</translation>
    </message>
    <message>
        <source>(1 passage from past conversations)</source>
        <translation>(1 fragmento de conversaciones anteriores)</translation>
    </message>
    <message>
        <source>({0} passages from past conversations)</source>
        <translation>({0} fragmentos de conversaciones anteriores)</translation>
    </message>
    <message>
        <source>Past conversations not searched: {0}</source>
        <translation>No se buscó en las conversaciones anteriores: {0}</translation>
    </message>
    <message>
        <source>You</source>
        <translation>Tú</translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation>Asistente</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>Copiar</translation>
    </message>
    <message>
        <source>Copied to the clipboard.</source>
        <translation>Copiado al portapapeles.</translation>
    </message>
    <message>
        <source>Withheld from the model&apos;s draft (not an answer):</source>
        <translation>Retenido del borrador del modelo (no es una respuesta):</translation>
    </message>
    <message>
        <source>Show what was withheld from the model&apos;s draft ({0})</source>
        <translation>Mostrar lo que se retuvo del borrador del modelo ({0})</translation>
    </message>
    <message>
        <source>Hide what was withheld</source>
        <translation>Ocultar lo retenido</translation>
    </message>
    <message>
        <source>✓ [n]: quoted from past message n (click a source to open it)</source>
        <translation>✓ [n]: citado del mensaje anterior n (pulsa una fuente para abrirla)</translation>
    </message>
    <message>
        <source>in grey italics: the model&apos;s own words</source>
        <translation>en cursiva gris: palabras del propio modelo</translation>
    </message>
    <message>
        <source>struck out: the model&apos;s draft, withheld as unsupported</source>
        <translation>tachado: el borrador del modelo, retenido por falta de respaldo</translation>
    </message>
    <message>
        <source>Ask the model to rephrase</source>
        <translation>Pedir reformulación</translation>
    </message>
    <message>
        <source>from “{0}” ({1}), {2}: {3}</source>
        <translation>de «{0}» ({1}), {2}: {3}</translation>
    </message>
    <message>
        <source>not from your past conversations</source>
        <extracomment>who wrote a message, readable on the light and on the dark palette the link of an answer&apos;s ✓ [n] mark: ``source:&lt;message index&gt;:&lt;n&gt;`` ``open:&lt;conversation id&gt;:&lt;message index&gt;``: a quoted past message, in its conversation ``rephrase:&lt;answer index&gt;``: ask that answer&apos;s question again, with the model&apos;s draft ``copy:&lt;index&gt;`` (a message) and ``copy:&lt;index&gt;:&lt;k&gt;`` (its code block *k*) a context passage as the agent gives it to the model: &quot;[name, date] role: text&quot;</extracomment>
        <translation>no procede de tus conversaciones anteriores</translation>
    </message>
    <message>
        <source>✓ [n]: past message n says it (named under the answer; click ✓ to see it whole) · in grey italics: the assistant&apos;s own words, {0}</source>
        <translation>✓ [n]: lo dice el mensaje anterior n (citado bajo la respuesta; pulsa ✓ para verlo entero) · en cursiva gris: palabras del propio asistente, {0}</translation>
    </message>
    <message>
        <source>System</source>
        <translation>Sistema</translation>
    </message>
    <message>
        <source>Tool</source>
        <translation>Herramienta</translation>
    </message>
    <message>
        <source>Opening the conversation…</source>
        <translation>Abriendo la conversación…</translation>
    </message>
    <message>
        <source>“{0}” cannot be opened: {1}</source>
        <translation>No se puede abrir «{0}»: {1}</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>detenido</translation>
    </message>
    <message>
        <source>“{0}” cannot be read: {1}</source>
        <translation>No se puede leer «{0}»: {1}</translation>
    </message>
    <message>
        <source>“{0}” no longer exists (deleted outside this tab?).</source>
        <translation>«{0}» ya no existe (¿se eliminó fuera de esta pestaña?).</translation>
    </message>
    <message>
        <source>Your next message starts a new conversation.</source>
        <translation>Tu próximo mensaje empezará una conversación nueva.</translation>
    </message>
    <message>
        <source>Renaming…</source>
        <translation>Renombrando…</translation>
    </message>
    <message>
        <source>Select a conversation to delete.</source>
        <translation>Selecciona la conversación que quieres eliminar.</translation>
    </message>
    <message>
        <source>“{0}” is deleted as soon as its answer has stopped.</source>
        <translation>«{0}» se eliminará en cuanto se detenga su respuesta.</translation>
    </message>
    <message>
        <source>Delete “{0}”? Its file is removed; this cannot be undone.</source>
        <translation>¿Eliminar «{0}»? Se borrará su archivo; no se puede deshacer.</translation>
    </message>
    <message>
        <source>Its answer is still being written: it is stopped first.</source>
        <translation>Su respuesta todavía se está escribiendo: primero se detendrá.</translation>
    </message>
    <message>
        <source>Stopping the answer, then deleting “{0}”…</source>
        <translation>Deteniendo la respuesta y eliminando después «{0}»…</translation>
    </message>
    <message>
        <source>this conversation</source>
        <translation>esta conversación</translation>
    </message>
    <message>
        <source>Deleted “{0}”.</source>
        <translation>Se eliminó «{0}».</translation>
    </message>
    <message>
        <source>Deleting…</source>
        <translation>Eliminando…</translation>
    </message>
    <message>
        <source>Searching past conversations…</source>
        <translation>Buscando en las conversaciones anteriores…</translation>
    </message>
    <message>
        <source>Nothing found.</source>
        <translation>No se encontró nada.</translation>
    </message>
    <message>
        <source>1 message found</source>
        <translation>1 mensaje encontrado</translation>
    </message>
    <message>
        <source>{0} messages found</source>
        <translation>{0} mensajes encontrados</translation>
    </message>
    <message>
        <source>Not searched: conversations that cannot be read ({0}; marked ⚠).</source>
        <translation>Sin buscar: conversaciones que no se pueden leer ({0}; marcadas con ⚠).</translation>
    </message>
    <message>
        <source>Rebuilding the search index…</source>
        <translation>Reconstruyendo el índice de búsqueda…</translation>
    </message>
    <message>
        <source>Search index rebuilt: {0}</source>
        <translation>Índice de búsqueda reconstruido: {0}</translation>
    </message>
    <message>
        <source>This passphrase does not open your history. Check it for a typo (letter case, keyboard layout).</source>
        <translation>Esta frase de contraseña no abre tu historial. Comprueba que no tenga erratas (mayúsculas, distribución del teclado).</translation>
    </message>
    <message>
        <source>No passphrase has been set for this history yet: set one first.</source>
        <translation>Todavía no se ha definido una frase de contraseña para este historial: define una primero.</translation>
    </message>
    <message>
        <source>Deriving the key from the passphrase…</source>
        <translation>Derivando la clave a partir de la frase de contraseña…</translation>
    </message>
    <message>
        <source>1 locked conversation readable again.</source>
        <translation>1 conversación bloqueada se puede leer de nuevo.</translation>
    </message>
    <message>
        <source>{0} locked conversations readable again.</source>
        <translation>{0} conversaciones bloqueadas se pueden leer de nuevo.</translation>
    </message>
    <message>
        <source>1 conversation encrypted with the new key.</source>
        <translation>1 conversación cifrada con la clave nueva.</translation>
    </message>
    <message>
        <source>{0} conversations encrypted with the new key.</source>
        <translation>{0} conversaciones cifradas con la clave nueva.</translation>
    </message>
    <message>
        <source>The new key is set; there were no conversations to encrypt.</source>
        <translation>La clave nueva está definida; no había conversaciones que cifrar.</translation>
    </message>
    <message>
        <source>1 conversation could not be read and was left as it was.</source>
        <translation>1 conversación no se pudo leer y se dejó como estaba.</translation>
    </message>
    <message>
        <source>{0} conversations could not be read and were left as they were.</source>
        <translation>{0} conversaciones no se pudieron leer y se dejaron como estaban.</translation>
    </message>
    <message>
        <source>Re-encrypting conversations…</source>
        <translation>Volviendo a cifrar las conversaciones…</translation>
    </message>
    <message>
        <source>Your {0} encrypted conversation(s) cannot be opened without their key. Start a new history? They are kept exactly as they are, listed as locked, and readable again whenever you give their key or passphrase.</source>
        <translation>Tus {0} conversación(es) cifrada(s) no se pueden abrir sin su clave. ¿Empezar un historial nuevo? Se conservan exactamente como están, aparecen como bloqueadas y se podrán leer de nuevo cuando indiques su clave o frase de contraseña.</translation>
    </message>
    <message>
        <source>“Continue unencrypted” stores new conversations in clear text: anyone who can read your files can read them.</source>
        <translation>«Continuar sin cifrar» guarda las conversaciones nuevas sin cifrar: cualquiera que pueda leer tus archivos podrá leerlas.</translation>
    </message>
    <message>
        <source>A new encrypted history is started.</source>
        <translation>Se ha empezado un historial cifrado nuevo.</translation>
    </message>
    <message>
        <source>A new history is started, stored in clear text.</source>
        <translation>Se ha empezado un historial nuevo, guardado sin cifrar.</translation>
    </message>
    <message>
        <source>1 earlier conversation kept untouched, locked.</source>
        <translation>1 conversación anterior se conserva intacta, bloqueada.</translation>
    </message>
    <message>
        <source>{0} earlier conversations kept untouched, locked.</source>
        <translation>{0} conversaciones anteriores se conservan intactas, bloqueadas.</translation>
    </message>
    <message>
        <source>Starting a new history…</source>
        <translation>Empezando un historial nuevo…</translation>
    </message>
    <message>
        <source>Imported 1 conversation, named “… (imported)”</source>
        <translation>Se importó 1 conversación, llamada «… (importada)»</translation>
    </message>
    <message>
        <source>Imported {0} conversations, named “… (imported)”</source>
        <translation>Se importaron {0} conversaciones, llamadas «… (importada)»</translation>
    </message>
    <message>
        <source> ({0} under a new id)</source>
        <translation> ({0} con un identificador nuevo)</translation>
    </message>
    <message>
        <source>; {0} already here, skipped: {1}</source>
        <translation>; {0} ya estaban aquí, omitidas: {1}</translation>
    </message>
    <message>
        <source> and {0} more</source>
        <translation> y {0} más</translation>
    </message>
    <message>
        <source>; {0} not imported: </source>
        <translation>; {0} sin importar: </translation>
    </message>
    <message>
        <source>; and {0} more</source>
        <translation>; y {0} más</translation>
    </message>
    <message>
        <source>1 message indexed</source>
        <translation>1 mensaje indexado</translation>
    </message>
    <message>
        <source>{0} messages indexed</source>
        <translation>{0} mensajes indexados</translation>
    </message>
    <message>
        <source>Conversations (*.json *.zip)</source>
        <translation>Conversaciones (*.json *.zip)</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>Todos los archivos (*)</translation>
    </message>
    <message>
        <source>Importing…</source>
        <translation>Importando…</translation>
    </message>
    <message>
        <source>Open a conversation to export it.</source>
        <translation>Abre una conversación para exportarla.</translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation>Markdown (*.md)</translation>
    </message>
    <message>
        <source>Exporting…</source>
        <translation>Exportando…</translation>
    </message>
</context>
<context>
    <name>DoctorDialog</name>
    <message>
        <source>Stores and models</source>
        <translation>Almacenes y modelos</translation>
    </message>
    <message>
        <source>
Everything this configuration needs is usable.</source>
        <translation>
Todo lo que necesita esta configuración se puede usar.</translation>
    </message>
    <message>
        <source>
Some stores or models this configuration needs are not usable.</source>
        <translation>
Algunos almacenes o modelos que necesita esta configuración no se pueden usar.</translation>
    </message>
</context>
<context>
    <name>FindModelsDialog</name>
    <message>
        <source>Model</source>
        <translation>Modelo</translation>
    </message>
    <message>
        <source>From</source>
        <translation>Origen</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>Estado</translation>
    </message>
    <message>
        <source>Memory needed</source>
        <translation>Memoria necesaria</translation>
    </message>
    <message>
        <source>File</source>
        <translation>Archivo</translation>
    </message>
    <message>
        <source>Find models on this computer</source>
        <translation>Buscar modelos en este equipo</translation>
    </message>
    <message>
        <source>GGUF models that LM Studio, Jan, GPT4All, llama.cpp or Ollama keep on this computer. Using one links it where it is: nothing is copied or downloaded.</source>
        <translation>Modelos GGUF que LM Studio, Jan, GPT4All, llama.cpp u Ollama guardan en este equipo. Usar uno lo enlaza donde está: no se copia ni se descarga nada.</translation>
    </message>
    <message>
        <source>Looking in the usual folders…</source>
        <translation>Buscando en las carpetas habituales…</translation>
    </message>
    <message>
        <source>Use for every assistant</source>
        <translation>Usar en todos los asistentes</translation>
    </message>
    <message>
        <source>Only add it to the list</source>
        <translation>Solo añadirlo a la lista</translation>
    </message>
    <message>
        <source>best fit for this computer</source>
        <translation>el más adecuado para este equipo</translation>
    </message>
    <message>
        <source>No GGUF models found in the folders of LM Studio, Jan, GPT4All, llama.cpp or Ollama. Tools ▸ Models… adds a file from anywhere.</source>
        <translation>No se encontraron modelos GGUF en las carpetas de LM Studio, Jan, GPT4All, llama.cpp u Ollama. Herramientas ▸ Modelos… añade un archivo desde cualquier lugar.</translation>
    </message>
    <message>
        <source>{0} is the best fit for this computer (needs about {1} of memory).</source>
        <translation>{0} es el más adecuado para este equipo (necesita unos {1} de memoria).</translation>
    </message>
    <message>
        <source>{0} model(s) found; none can chat within this computer&apos;s memory.</source>
        <translation>Se encontraron {0} modelo(s); ninguno puede conversar con la memoria de este equipo.</translation>
    </message>
    <message>
        <source>Could not look: {0}</source>
        <translation>No se pudo buscar: {0}</translation>
    </message>
    <message>
        <source>Every assistant answers with {0} from its next answer.</source>
        <translation>Todos los asistentes responderán con {0} a partir de su próxima respuesta.</translation>
    </message>
    <message>
        <source>Added to the list; pick it in a tab or in Settings.</source>
        <translation>Añadido a la lista; elígelo en una pestaña o en Configuración.</translation>
    </message>
</context>
<context>
    <name>InspectorPane</name>
    <message numerus="yes">
        <source>%Ln record(s)</source>
        <extracomment>how the pane gets the audit service (built on first use, in a worker) the view is ready (after opening or applying filters); tests wait on it verification finished: the :class:`VerifyResult` an export finished: the number of records the detail view shows a record an inclusion proof was written: its path a person was forgotten: their pseudonym (&quot;&quot; when there was no key) the checkpoints were checked against the log: the list of CheckpointStatus</extracomment>
        <translation>
            <numerusform>%Ln registro</numerusform>
            <numerusform>%Ln registros</numerusform>
        </translation>
    </message>
    <message>
        <source>Pseudonym (p-…)</source>
        <extracomment>the dates as the filter&apos;s fields and the date edits show them</extracomment>
        <translation>Seudónimo (p-…)</translation>
    </message>
    <message>
        <source>Any event</source>
        <translation>Cualquier evento</translation>
    </message>
    <message>
        <source>From</source>
        <translation>Desde</translation>
    </message>
    <message>
        <source>Filter</source>
        <translation>Filtrar</translation>
    </message>
    <message>
        <source>Show all</source>
        <translation>Mostrar todo</translation>
    </message>
    <message>
        <source>Person&apos;s name</source>
        <translation>Nombre de la persona</translation>
    </message>
    <message>
        <source>For an authorised reviewer: find a person&apos;s records by name. The name is looked up through the pseudonym keys; it is never stored in clear.</source>
        <translation>Para un revisor autorizado: busca los registros de una persona por su nombre. El nombre se busca a través de las claves de seudónimos; nunca se guarda sin cifrar.</translation>
    </message>
    <message>
        <source>Person</source>
        <translation>Persona</translation>
    </message>
    <message>
        <source>Pseudonym</source>
        <translation>Seudónimo</translation>
    </message>
    <message>
        <source>Event</source>
        <translation>Evento</translation>
    </message>
    <message>
        <source>to</source>
        <translation>hasta</translation>
    </message>
    <message>
        <source>Select a record to read it.</source>
        <extracomment>the record shown last (None: none yet)</extracomment>
        <translation>Selecciona un registro para leerlo.</translation>
    </message>
    <message>
        <source>Select a record to see it in full.</source>
        <translation>Selecciona un registro para verlo completo.</translation>
    </message>
    <message>
        <source>Show the stored JSON</source>
        <translation>Mostrar el JSON guardado</translation>
    </message>
    <message>
        <source>Export proof…</source>
        <translation>Exportar prueba…</translation>
    </message>
    <message>
        <source>Write a proof that this record is in the signed log (c2sp.org/tlog-proof), which anyone can check with the verifier key alone</source>
        <translation>Escribir una prueba de que este registro está en el registro firmado (c2sp.org/tlog-proof), que cualquiera puede comprobar solo con la clave de verificación</translation>
    </message>
    <message>
        <source>Give this key to whoever checks a proof or checkpoint of this log</source>
        <extracomment>the checkpoint check&apos;s outcome, coloured</extracomment>
        <translation>Entrega esta clave a quien compruebe una prueba o un punto de control de este registro</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>Copiar</translation>
    </message>
    <message>
        <source>Check the checkpoints</source>
        <translation>Comprobar los puntos de control</translation>
    </message>
    <message>
        <source>Is today&apos;s log consistent with every checkpoint signed so far?</source>
        <translation>¿Es el registro de hoy coherente con todos los puntos de control firmados hasta ahora?</translation>
    </message>
    <message>
        <source>Verify a proof file…</source>
        <translation>Verificar un archivo de prueba…</translation>
    </message>
    <message>
        <source>Verifier key</source>
        <translation>Clave de verificación</translation>
    </message>
    <message>
        <source>Record</source>
        <extracomment>said before the next view&apos;s line (what Forget did) where the running export writes Enter on a listed event type emits both signals that filter: they coalesce here</extracomment>
        <translation>Registro</translation>
    </message>
    <message>
        <source>Checkpoints and proofs</source>
        <translation>Puntos de control y pruebas</translation>
    </message>
    <message>
        <source>Verify</source>
        <translation>Verificar</translation>
    </message>
    <message>
        <source>Recompute every hash and check the signed checkpoints</source>
        <translation>Recalcular cada hash y comprobar los puntos de control firmados</translation>
    </message>
    <message>
        <source>Only since the last checkpoint</source>
        <translation>Solo desde el último punto de control</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Cancelar</translation>
    </message>
    <message>
        <source>Not verified yet</source>
        <translation>Aún sin verificar</translation>
    </message>
    <message>
        <source>Export CSV…</source>
        <translation>Exportar CSV…</translation>
    </message>
    <message>
        <source>Export JSONL…</source>
        <translation>Exportar JSONL…</translation>
    </message>
    <message>
        <source>With questions and answers</source>
        <translation>Con preguntas y respuestas</translation>
    </message>
    <message>
        <source>For an authorised reviewer: the export also holds each record&apos;s decrypted fields (what was asked and the answer shown). The disclosure is recorded in the audit log.</source>
        <translation>Para un revisor autorizado: la exportación incluye también los campos descifrados de cada registro (lo que se preguntó y la respuesta mostrada). La divulgación queda anotada en el registro de auditoría.</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>Actualizar</translation>
    </message>
    <message>
        <source>Forget a person…</source>
        <translation>Olvidar a una persona…</translation>
    </message>
    <message>
        <source>Erase a person: destroy their key, so their records can never be read again</source>
        <translation>Borrar a una persona: destruir su clave, para que sus registros no se puedan volver a leer</translation>
    </message>
    <message>
        <source>Loading the audit log…</source>
        <translation>Cargando el registro de auditoría…</translation>
    </message>
    <message>
        <source>{0} in {1}</source>
        <translation>{0} en {1}</translation>
    </message>
    <message>
        <source>{0} match the filters ({1})</source>
        <translation>{0} coinciden con los filtros ({1})</translation>
    </message>
    <message>
        <source>No key for that name: never seen, or erased (an erased person cannot be found by name)</source>
        <translation>No hay clave para ese nombre: nunca se vio o se borró (a una persona borrada no se la puede encontrar por su nombre)</translation>
    </message>
    <message>
        <source>the person is {0}</source>
        <translation>la persona es {0}</translation>
    </message>
    <message>
        <source>Audit log unavailable</source>
        <translation>Registro de auditoría no disponible</translation>
    </message>
    <message>
        <source>Unexpected error</source>
        <translation>Error inesperado</translation>
    </message>
    <message>
        <source>Some records could not be read: {0} (Refresh to try again)</source>
        <translation>Algunos registros no se pudieron leer: {0} (pulsa Actualizar para reintentarlo)</translation>
    </message>
    <message>
        <source>Chain intact: {0} verified in {1} s</source>
        <translation>Cadena intacta: {0} verificados en {1} s</translation>
    </message>
    <message>
        <source>Sequence number {0} is missing from the log: the record was deleted.</source>
        <translation>Falta el número de secuencia {0} en el registro: se eliminó la entrada.</translation>
    </message>
    <message>
        <source>This is the first broken link.</source>
        <translation>Este es el primer eslabón roto.</translation>
    </message>
    <message>
        <source>nobody in particular</source>
        <translation>nadie en concreto</translation>
    </message>
    <message>
        <source>erased: this person&apos;s fields can never be read again</source>
        <translation>borrado: los campos de esta persona ya no se podrán leer nunca</translation>
    </message>
    <message>
        <source>Who</source>
        <translation>Quién</translation>
    </message>
    <message>
        <source>When</source>
        <translation>Cuándo</translation>
    </message>
    <message>
        <source>Asked</source>
        <translation>Pregunta</translation>
    </message>
    <message>
        <source>As a follow-up to</source>
        <translation>Como continuación de</translation>
    </message>
    <message>
        <source>Shown</source>
        <translation>Mostrado</translation>
    </message>
    <message>
        <source>Withheld (not supported by the notes)</source>
        <translation>Retenido (sin respaldo en los apuntes)</translation>
    </message>
    <message>
        <source>none</source>
        <translation>ninguno</translation>
    </message>
    <message>
        <source>Asked / shown</source>
        <translation>Pregunta / respuesta mostrada</translation>
    </message>
    <message>
        <source>erased</source>
        <translation>borrado</translation>
    </message>
    <message>
        <source>Sources cited</source>
        <translation>Fuentes citadas</translation>
    </message>
    <message>
        <source>Passages consulted</source>
        <translation>Fragmentos consultados</translation>
    </message>
    <message>
        <source>Grounding check</source>
        <translation>Comprobación de respaldo</translation>
    </message>
    <message>
        <source>Export a proof of record {0}</source>
        <translation>Exportar una prueba del registro {0}</translation>
    </message>
    <message>
        <source>Transparency-log proofs (*.tlog-proof)</source>
        <translation>Pruebas de registro de transparencia (*.tlog-proof)</translation>
    </message>
    <message>
        <source>Writing the proof of record {0}…</source>
        <translation>Escribiendo la prueba del registro {0}…</translation>
    </message>
    <message>
        <source>Proof written to {0}: check it with the verifier key (Checkpoints and proofs)</source>
        <translation>Prueba escrita en {0}: compruébala con la clave de verificación (Puntos de control y pruebas)</translation>
    </message>
    <message>
        <source>Verifier key copied</source>
        <translation>Clave de verificación copiada</translation>
    </message>
    <message>
        <source>Checking the checkpoints…</source>
        <translation>Comprobando los puntos de control…</translation>
    </message>
    <message>
        <source>consistent</source>
        <translation>coherente</translation>
    </message>
    <message>
        <source>BROKEN — the first one the log breaks</source>
        <translation>ROTO — el primero que el registro incumple</translation>
    </message>
    <message>
        <source>broken</source>
        <translation>roto</translation>
    </message>
    <message>
        <source>seq {0} · signed {1} UTC · {2}</source>
        <translation>n.º {0} · firmado {1} UTC · {2}</translation>
    </message>
    <message>
        <source>No checkpoint yet: take one with `custodia audit checkpoint`.</source>
        <translation>Aún no hay puntos de control: crea uno con `custodia audit checkpoint`.</translation>
    </message>
    <message>
        <source>Today&apos;s log is consistent with all {0} checkpoints.</source>
        <translation>El registro de hoy es coherente con los {0} puntos de control.</translation>
    </message>
    <message>
        <source>The log no longer matches the checkpoint at seq {0} (signed {1}): {2}</source>
        <translation>El registro ya no coincide con el punto de control en el n.º {0} (firmado {1}): {2}</translation>
    </message>
    <message>
        <source>Cannot check the checkpoints: {0}</source>
        <translation>No se pueden comprobar los puntos de control: {0}</translation>
    </message>
    <message>
        <source>Verifying…</source>
        <translation>Verificando…</translation>
    </message>
    <message>
        <source>Chain intact: {0} ({1} verified since the checkpoint at seq {2})</source>
        <translation>Cadena intacta: {0} ({1} verificados desde el punto de control en el n.º {2})</translation>
    </message>
    <message>
        <source>Broken at seq {0}: {1} — {2}</source>
        <translation>Rota en el n.º {0}: {1} — {2}</translation>
    </message>
    <message>
        <source>Verification failed: {0}</source>
        <translation>La verificación falló: {0}</translation>
    </message>
    <message>
        <source>Verification cancelled</source>
        <translation>Verificación cancelada</translation>
    </message>
    <message>
        <source>Forget a person</source>
        <translation>Olvidar a una persona</translation>
    </message>
    <message>
        <source>The person&apos;s name, as the tutor knows it:</source>
        <translation>El nombre de la persona, tal como lo conoce el tutor:</translation>
    </message>
    <message>
        <source>Forget {0}?</source>
        <translation>¿Olvidar a {0}?</translation>
    </message>
    <message>
        <source>{0}&apos;s key will be destroyed: what they asked and were shown can never be read again, by anyone, and an erasure record is added to the log.

Not erased: their records stay in the chain (sealed, unreadable), so the log still verifies; notes they imported into the tutor stay until deleted there; copies of the key store in your own backups are not reached.</source>
        <translation>Se destruirá la clave de {0}: lo que preguntó y lo que se le mostró no podrá volver a leerlo nadie, y se añade al registro una anotación del borrado.

No se borra: sus registros siguen en la cadena (sellados, ilegibles), así que el registro se sigue verificando; los apuntes que importó en el tutor siguen ahí hasta que se eliminen allí; las copias del almacén de claves en tus propias copias de seguridad no se ven afectadas.</translation>
    </message>
    <message>
        <source>Forgetting…</source>
        <translation>Olvidando…</translation>
    </message>
    <message>
        <source>Forgotten: the key of {0} is destroyed</source>
        <translation>Olvidado: la clave de {0} está destruida</translation>
    </message>
    <message>
        <source>No key for that name: nothing to forget</source>
        <translation>No hay clave para ese nombre: nada que olvidar</translation>
    </message>
    <message>
        <source>Export the audit log</source>
        <translation>Exportar el registro de auditoría</translation>
    </message>
    <message>
        <source>CSV files (*.csv)</source>
        <translation>Archivos CSV (*.csv)</translation>
    </message>
    <message>
        <source>JSON lines (*.jsonl)</source>
        <translation>Líneas JSON (*.jsonl)</translation>
    </message>
    <message>
        <source>Export decrypted questions and answers?</source>
        <translation>¿Exportar las preguntas y respuestas descifradas?</translation>
    </message>
    <message>
        <source>The file will hold, in clear, what each person asked and the answer they were shown. Export it only if you are authorised to read it, and keep it safe. The export is recorded in the audit log.</source>
        <translation>El archivo contendrá, sin cifrar, lo que preguntó cada persona y la respuesta que se le mostró. Expórtalo solo si estás autorizado a leerlo, y guárdalo en un lugar seguro. La exportación queda anotada en el registro de auditoría.</translation>
    </message>
    <message>
        <source>Exporting to {0}…</source>
        <translation>Exportando a {0}…</translation>
    </message>
    <message>
        <source>Exported {0} to {1}</source>
        <translation>Se exportaron {0} a {1}</translation>
    </message>
</context>
<context>
    <name>KeyDialog</name>
    <message>
        <source>Start a new encrypted history</source>
        <translation>Empezar un historial cifrado nuevo</translation>
    </message>
    <message>
        <source>Conversations key</source>
        <translation>Clave de las conversaciones</translation>
    </message>
    <message>
        <source>Your {0} encrypted conversation(s) are kept exactly as they are, listed as &lt;b&gt;locked&lt;/b&gt;; give their key or passphrase here later to read them again. New conversations go to a new history under the key or passphrase you set now.</source>
        <translation>Tus {0} conversación(es) cifrada(s) se conservan exactamente como están, marcadas como &lt;b&gt;bloqueadas&lt;/b&gt;; indica aquí su clave o frase de contraseña más adelante para volver a leerlas. Las conversaciones nuevas irán a un historial nuevo con la clave o frase de contraseña que definas ahora.</translation>
    </message>
    <message>
        <source>Every conversation will be encrypted again with this key, or with a key made from a passphrase. Keep a copy: without it the history cannot be read. An interrupted change goes on when you give the same key again.</source>
        <translation>Todas las conversaciones se volverán a cifrar con esta clave, o con una clave creada a partir de una frase de contraseña. Guarda una copia: sin ella no se puede leer el historial. Un cambio interrumpido continúa al indicar de nuevo la misma clave.</translation>
    </message>
    <message>
        <source>&lt;b&gt;This computer has no keyring to keep the key in&lt;/b&gt;: a key typed or generated here is kept &lt;b&gt;for this session only&lt;/b&gt; — after a restart your conversations are locked until you give it again. &lt;b&gt;A passphrase needs no keyring&lt;/b&gt;: you type it again at each start.</source>
        <translation>&lt;b&gt;Este equipo no tiene llavero donde guardar la clave&lt;/b&gt;: una clave escrita o generada aquí se guarda &lt;b&gt;solo durante esta sesión&lt;/b&gt;; tras reiniciar, tus conversaciones quedan bloqueadas hasta que vuelvas a indicarla. &lt;b&gt;Una frase de contraseña no necesita llavero&lt;/b&gt;: la vuelves a escribir en cada inicio.</translation>
    </message>
    <message>
        <source>Passphrase</source>
        <translation>Frase de contraseña</translation>
    </message>
    <message>
        <source>Key</source>
        <translation>Clave</translation>
    </message>
    <message>
        <source>a few words you will remember</source>
        <translation>unas palabras que recordarás</translation>
    </message>
    <message>
        <source>&amp;Passphrase:</source>
        <translation>&amp;Frase de contraseña:</translation>
    </message>
    <message>
        <source>Set a new passphrase (re-encrypts every conversation)</source>
        <translation>Definir una frase de contraseña nueva (vuelve a cifrar todas las conversaciones)</translation>
    </message>
    <message>
        <source>the same passphrase again</source>
        <translation>la misma frase de contraseña otra vez</translation>
    </message>
    <message>
        <source>&amp;Again:</source>
        <translation>&amp;Repetir:</translation>
    </message>
    <message>
        <source>the key (44 characters)</source>
        <translation>la clave (44 caracteres)</translation>
    </message>
    <message>
        <source>Details</source>
        <extracomment>a generated key without a keyring: copy it now (session only otherwise) for whoever needs them: the cipher, key ids, the keyring&apos;s reason, the variables</extracomment>
        <translation>Detalles</translation>
    </message>
    <message>
        <source>Copy this key now and keep it safe: without a keyring it is kept for this session only. Or choose Passphrase instead.</source>
        <translation>Copia ahora esta clave y guárdala en un lugar seguro: sin llavero solo se conserva durante esta sesión. O elige Frase de contraseña en su lugar.</translation>
    </message>
    <message>
        <source>check it for a typo: an unfinished key change waits for the key it started with</source>
        <translation>comprueba que no tenga erratas: un cambio de clave sin terminar espera la clave con la que empezó</translation>
    </message>
    <message>
        <source>Enter the key of the unfinished key change.</source>
        <translation>Escribe la clave del cambio de clave sin terminar.</translation>
    </message>
    <message>
        <source>This is not a key of the right form: {0}.</source>
        <translation>No es una clave con la forma correcta: {0}.</translation>
    </message>
    <message>
        <source>A key change is unfinished and this is not its key: give the key it started with to finish it. Another key can be set once it is done.</source>
        <translation>Hay un cambio de clave sin terminar y esta no es su clave: indica la clave con la que empezó para terminarlo. Se podrá definir otra clave cuando termine.</translation>
    </message>
    <message>
        <source>Cipher: Fernet (AES-128 in CBC mode with an HMAC-SHA256 check).</source>
        <translation>Cifrado: Fernet (AES-128 en modo CBC con una comprobación HMAC-SHA256).</translation>
    </message>
    <message>
        <source>Key id: {0}</source>
        <translation>Id. de la clave: {0}</translation>
    </message>
    <message>
        <source>the CONVERSATIONS_KEY environment variable</source>
        <translation>la variable de entorno CONVERSATIONS_KEY</translation>
    </message>
    <message>
        <source>a passphrase in the CONVERSATIONS_PASSPHRASE environment variable</source>
        <translation>una frase de contraseña en la variable de entorno CONVERSATIONS_PASSPHRASE</translation>
    </message>
    <message>
        <source>the OS keyring</source>
        <translation>el llavero del sistema</translation>
    </message>
    <message>
        <source>a passphrase given in the app</source>
        <translation>una frase de contraseña indicada en la aplicación</translation>
    </message>
    <message>
        <source>this session only</source>
        <translation>solo esta sesión</translation>
    </message>
    <message>
        <source>Key from: {0}</source>
        <translation>Origen de la clave: {0}</translation>
    </message>
    <message>
        <source>Unfinished key change to key id {0}</source>
        <translation>Cambio de clave sin terminar a la clave con id. {0}</translation>
    </message>
    <message>
        <source>Key ids the history needs: {0}</source>
        <translation>Id. de clave que necesita el historial: {0}</translation>
    </message>
    <message>
        <source>Key ids of locked earlier histories: {0}</source>
        <translation>Id. de clave de historiales anteriores bloqueados: {0}</translation>
    </message>
    <message>
        <source>At start, the CONVERSATIONS_KEY environment variable (a key) or CONVERSATIONS_PASSPHRASE (a passphrase) gives the key without asking.</source>
        <translation>Al iniciar, la variable de entorno CONVERSATIONS_KEY (una clave) o CONVERSATIONS_PASSPHRASE (una frase de contraseña) proporciona la clave sin preguntar.</translation>
    </message>
    <message>
        <source>Generate</source>
        <translation>Generar</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>Copiar</translation>
    </message>
    <message>
        <source>Copy the key to the clipboard (keep it somewhere safe)</source>
        <translation>Copiar la clave al portapapeles (guárdala en un lugar seguro)</translation>
    </message>
    <message>
        <source>Show the key</source>
        <translation>Mostrar la clave</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>Copiado</translation>
    </message>
    <message>
        <source>check it for a typo: it must be the key your conversations are encrypted with (a new key from Generate would not open them)</source>
        <translation>comprueba que no tenga erratas: debe ser la clave con la que están cifradas tus conversaciones (una clave nueva de Generar no las abriría)</translation>
    </message>
    <message>
        <source>check it for a typo, or press Generate to make a new one</source>
        <translation>comprueba que no tenga erratas, o pulsa Generar para crear una nueva</translation>
    </message>
    <message>
        <source>Enter the key your conversations are encrypted with.</source>
        <translation>Escribe la clave con la que están cifradas tus conversaciones.</translation>
    </message>
    <message>
        <source>Enter a key, or press Generate to make a new one.</source>
        <translation>Escribe una clave, o pulsa Generar para crear una nueva.</translation>
    </message>
    <message>
        <source>Enter the passphrase.</source>
        <translation>Escribe la frase de contraseña.</translation>
    </message>
    <message>
        <source>A passphrase needs at least {0} characters (a few words are easier to remember and harder to guess).</source>
        <translation>La frase de contraseña necesita al menos {0} caracteres (unas cuantas palabras son más fáciles de recordar y más difíciles de adivinar).</translation>
    </message>
    <message>
        <source>The two passphrases differ: type the same one twice.</source>
        <translation>Las dos frases de contraseña no coinciden: escribe la misma dos veces.</translation>
    </message>
    <message>
        <source>To set another passphrase, tick “{0}”.</source>
        <translation>Para definir otra frase de contraseña, marca «{0}».</translation>
    </message>
    <message>
        <source>Deriving the key from the passphrase (about half a second)…</source>
        <translation>Derivando la clave a partir de la frase de contraseña (alrededor de medio segundo)…</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>a multi-agent session</source>
        <translation>una sesión multiagente</translation>
    </message>
    <message>
        <source>re-embedding the multi-agent memory</source>
        <translation>el recálculo de vectores de la memoria multiagente</translation>
    </message>
    <message>
        <source>an answer in Memories</source>
        <translation>una respuesta en Recuerdos</translation>
    </message>
    <message>
        <source>re-embedding the memories</source>
        <translation>el recálculo de vectores de los recuerdos</translation>
    </message>
    <message>
        <source>an answer in Conversations</source>
        <translation>una respuesta en Conversaciones</translation>
    </message>
    <message>
        <source>rebuilding the conversations&apos; search index</source>
        <translation>la reconstrucción del índice de búsqueda de las conversaciones</translation>
    </message>
    <message>
        <source>re-encrypting the conversations</source>
        <translation>el nuevo cifrado de las conversaciones</translation>
    </message>
    <message>
        <source>an import of conversations</source>
        <translation>una importación de conversaciones</translation>
    </message>
    <message>
        <source>an export of conversations</source>
        <translation>una exportación de conversaciones</translation>
    </message>
    <message>
        <source>an answer in the clinical tutor</source>
        <translation>una respuesta en el tutor clínico</translation>
    </message>
    <message>
        <source>an import of study notes</source>
        <translation>una importación de apuntes de estudio</translation>
    </message>
    <message>
        <source>Tutor</source>
        <translation>Tutor</translation>
    </message>
    <message>
        <source>Memories</source>
        <translation>Recuerdos</translation>
    </message>
    <message>
        <source>Conversations</source>
        <translation>Conversaciones</translation>
    </message>
    <message>
        <source>Multi-agent</source>
        <translation>Multiagente</translation>
    </message>
    <message>
        <source>{0} (loading…)</source>
        <extracomment>assistant -&gt; (what it answers with, why/details)</extracomment>
        <translation>{0} (cargando…)</translation>
    </message>
    <message>
        <source>Custodia</source>
        <extracomment>narrow enough for a 900-px-wide screen (window frame and a scroll bar included) emitted once the start-up checks finished: the list of :class:`doctor.Check` the audit service, for the inspector (built when it first loads the log) the user chose &quot;Quit anyway&quot; (or nothing was running): close without asking what the model lists offer (read in a worker: the models folders&apos; GGUF headers)</extracomment>
        <translation>Custodia</translation>
    </message>
    <message>
        <source>Profile: {0}</source>
        <extracomment>from this window width on every piece is shown; below it the profile, the embedder and the default chat model give way (at 760 px every label was cut: &quot;Perfil: int&quot;) what an elided label keeps at least: a few letters and &quot;…&quot;</extracomment>
        <translation>Perfil: {0}</translation>
    </message>
    <message>
        <source>Chat: {0} (loading…)</source>
        <translation>Chat: {0} (cargando…)</translation>
    </message>
    <message>
        <source>Embedder: {0} (loading…)</source>
        <translation>Vectorizador: {0} (cargando…)</translation>
    </message>
    <message>
        <source>Checking stores…</source>
        <translation>Comprobando los almacenes…</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <extracomment>the memory chats and the tutor&apos;s threads, kept in sidebars (issue 30) a better model found on first run, offered in the welcome</extracomment>
        <translation>&amp;Archivo</translation>
    </message>
    <message>
        <source>&amp;Settings…</source>
        <translation>&amp;Configuración…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>&amp;Salir</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>&amp;Ver</translation>
    </message>
    <message>
        <source>Audit &amp;inspector</source>
        <translation>&amp;Inspector de auditoría</translation>
    </message>
    <message>
        <source>&amp;Storage map</source>
        <translation>&amp;Mapa de almacenamiento</translation>
    </message>
    <message>
        <source>&amp;Theme</source>
        <translation>&amp;Tema</translation>
    </message>
    <message>
        <source>&amp;System</source>
        <translation>&amp;Sistema</translation>
    </message>
    <message>
        <source>&amp;Light</source>
        <translation>&amp;Claro</translation>
    </message>
    <message>
        <source>&amp;Dark</source>
        <translation>&amp;Oscuro</translation>
    </message>
    <message>
        <source>&amp;Tools</source>
        <translation>&amp;Herramientas</translation>
    </message>
    <message>
        <source>Check stores and &amp;models…</source>
        <translation>Comprobar almacenes y &amp;modelos…</translation>
    </message>
    <message>
        <source>&amp;Models</source>
        <translation>&amp;Modelos</translation>
    </message>
    <message>
        <source>&amp;Manage models…</source>
        <translation>&amp;Gestionar modelos…</translation>
    </message>
    <message>
        <source>&amp;Find models on this computer…</source>
        <translation>&amp;Buscar modelos en este equipo…</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>A&amp;yuda</translation>
    </message>
    <message>
        <source>&amp;User guide</source>
        <translation>&amp;Guía del usuario</translation>
    </message>
    <message>
        <source>&amp;Keyboard shortcuts</source>
        <translation>&amp;Atajos de teclado</translation>
    </message>
    <message>
        <source>&amp;About Custodia</source>
        <translation>A&amp;cerca de Custodia</translation>
    </message>
    <message>
        <source>Chat: {0}</source>
        <translation>Chat: {0}</translation>
    </message>
    <message>
        <source>Chat: retrieval-only mode</source>
        <translation>Chat: modo solo recuperación</translation>
    </message>
    <message>
        <source>Chat: unavailable</source>
        <translation>Chat: no disponible</translation>
    </message>
    <message>
        <source>Embedder: {0} ({1}-d)</source>
        <translation>Vectorizador: {0} ({1} dim.)</translation>
    </message>
    <message>
        <source>Embedder: unavailable</source>
        <translation>Vectorizador: no disponible</translation>
    </message>
    <message>
        <source>&lt;b&gt;Problems:&lt;/b&gt; {0} — see Tools ▸ Check stores and models</source>
        <translation>&lt;b&gt;Problemas:&lt;/b&gt; {0} — véase Herramientas ▸ Comprobar almacenes y modelos</translation>
    </message>
    <message>
        <source>All stores and models ready</source>
        <translation>Almacenes y modelos listos</translation>
    </message>
    <message>
        <source>&lt;b&gt;Start-up checks failed:&lt;/b&gt; {0}</source>
        <translation>&lt;b&gt;Fallaron las comprobaciones de inicio:&lt;/b&gt; {0}</translation>
    </message>
    <message>
        <source>{0}: {1}</source>
        <translation>{0}: {1}</translation>
    </message>
    <message>
        <source>Every assistant answers with {0} from its next answer.</source>
        <translation>Todos los asistentes responderán con {0} a partir de su próxima respuesta.</translation>
    </message>
    <message>
        <source>Not used — {0}</source>
        <translation>Sin usar — {0}</translation>
    </message>
    <message>
        <source>Quit Custodia?</source>
        <translation>¿Salir de Custodia?</translation>
    </message>
    <message>
        <source>Custodia is working: {0}.</source>
        <translation>Custodia está trabajando: {0}.</translation>
    </message>
    <message>
        <source>Quitting stops it; a multi-agent session can be resumed at the next start.</source>
        <translation>Si sales, se detendrá; una sesión multiagente se puede reanudar en el próximo inicio.</translation>
    </message>
    <message>
        <source>Quit anyway</source>
        <translation>Salir de todos modos</translation>
    </message>
    <message>
        <source>Keep running</source>
        <translation>Seguir trabajando</translation>
    </message>
    <message>
        <source>{0} task(s) running</source>
        <translation>{0} tarea(s) en curso</translation>
    </message>
    <message>
        <source>Stopping {0} task(s)…</source>
        <translation>Deteniendo {0} tarea(s)…</translation>
    </message>
    <message>
        <source>Custodia is still working</source>
        <translation>Custodia sigue trabajando</translation>
    </message>
    <message>
        <source>Some work did not stop in 30 s. Quit anyway?</source>
        <translation>Algunas tareas no se detuvieron en 30 s. ¿Salir de todos modos?</translation>
    </message>
</context>
<context>
    <name>MemoriesTab</name>
    <message>
        <source>Memories: undo the last change</source>
        <extracomment>a theme switch reaches a widget as one of these memories shown in the list without a search (the rest are one search away) the model&apos;s draft for it, shown or not (a later draft repeating it is withheld) a turn ended: the conversation (:attr:`history`) may be kept (desktop/thread_list.py) this tab&apos;s service, built on first use (only ever inside a worker job) which model it answers with (none: no picker; it keeps the model it was built with) the exchange whose question is being edited (it and what follows are greyed) the memories of the previous default model were re-embedded unasked (once)</extracomment>
        <translation>Recuerdos: deshacer el último cambio</translation>
    </message>
    <message>
        <source>Memories: delete the selected memory</source>
        <translation>Recuerdos: eliminar el recuerdo seleccionado</translation>
    </message>
    <message>
        <source>Tell me about yourself and ask me anything: I recall what you told me before, even in another session. “Remember that …” stores a fact; every message has a Remember button.</source>
        <translation>Háblame de ti y pregúntame lo que quieras: recuerdo lo que me contaste antes, incluso en otra sesión. «Recuerda que…» guarda un dato; cada mensaje tiene un botón Recordar.</translation>
    </message>
    <message>
        <source>Message (Enter to send)…</source>
        <translation>Mensaje (Intro para enviar)…</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>Enviar</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Detener</translation>
    </message>
    <message>
        <source>Cancel edit</source>
        <translation>Cancelar la edición</translation>
    </message>
    <message>
        <source>Keep the conversation as it was (Esc)</source>
        <translation>Dejar la conversación como estaba (Esc)</translation>
    </message>
    <message>
        <source>&lt;b&gt;Memories used by the last answer&lt;/b&gt;</source>
        <extracomment>where a memory&apos;s own text is kept on its list item (the shown text may add a similarity)</extracomment>
        <translation>&lt;b&gt;Recuerdos usados en la última respuesta&lt;/b&gt;</translation>
    </message>
    <message>
        <source>Similarity</source>
        <translation>Similitud</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>Recuerdo</translation>
    </message>
    <message>
        <source>Why it was recalled</source>
        <translation>Motivo</translation>
    </message>
    <message>
        <source>&lt;b&gt;Memories&lt;/b&gt;</source>
        <translation>&lt;b&gt;Recuerdos&lt;/b&gt;</translation>
    </message>
    <message>
        <source>Loading memories…</source>
        <translation>Cargando los recuerdos…</translation>
    </message>
    <message>
        <source>Re-embed all</source>
        <translation>Recalcular vectores</translation>
    </message>
    <message>
        <source>Give every memory a vector of the current embedder so all are searched</source>
        <translation>Dar a cada recuerdo un vector del vectorizador actual para que se busque en todos</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Cancelar</translation>
    </message>
    <message>
        <source>Search memories…</source>
        <translation>Buscar en los recuerdos…</translation>
    </message>
    <message>
        <source>New memory…</source>
        <translation>Recuerdo nuevo…</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>Añadir</translation>
    </message>
    <message>
        <source>Edit</source>
        <translation>Editar</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>Eliminar</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>Deshacer</translation>
    </message>
    <message>
        <source>Undo the last change to the memories (Ctrl+Z)</source>
        <translation>Deshacer el último cambio en los recuerdos (Ctrl+Z)</translation>
    </message>
    <message>
        <source>{0} · recall at similarity ≥ {1} ({2})</source>
        <translation>{0} · se recuerda con similitud ≥ {1} ({2})</translation>
    </message>
    <message>
        <source>The memories cannot be opened: {0}</source>
        <translation>No se pueden abrir los recuerdos: {0}</translation>
    </message>
    <message>
        <source>Source: {0} · updated {1} · {2}</source>
        <translation>Origen: {0} · actualizado {1} · {2}</translation>
    </message>
    <message>
        <source>unknown model</source>
        <translation>modelo desconocido</translation>
    </message>
    <message>
        <source>Not searched until re-embedded ({0}-d, {1})</source>
        <translation>No se busca hasta recalcular su vector ({0} dim., {1})</translation>
    </message>
    <message>
        <source>1 memory</source>
        <translation>1 recuerdo</translation>
    </message>
    <message>
        <source>{0} memories</source>
        <translation>{0} recuerdos</translation>
    </message>
    <message>
        <source>Something went wrong (see the log): {0}</source>
        <translation>Algo salió mal (véase el registro): {0}</translation>
    </message>
    <message>
        <source>Thinking…</source>
        <translation>Pensando…</translation>
    </message>
    <message>
        <source>No memory reached similarity {0}</source>
        <translation>Ningún recuerdo alcanzó la similitud {0}</translation>
    </message>
    <message>
        <source>recall is limited until the memories are re-embedded</source>
        <translation>la memoria es limitada hasta recalcular los vectores de los recuerdos</translation>
    </message>
    <message>
        <source>[stopped]</source>
        <translation>[detenido]</translation>
    </message>
    <message>
        <source>[No answer: {0}]</source>
        <translation>[Sin respuesta: {0}]</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>Cancelando…</translation>
    </message>
    <message>
        <source>Editing a question: Enter sends it in place of the greyed messages; Esc keeps them.</source>
        <translation>Editando una pregunta: Intro la envía en lugar de los mensajes en gris; Esc los conserva.</translation>
    </message>
    <message>
        <source>Copied to the clipboard.</source>
        <translation>Copiado al portapapeles.</translation>
    </message>
    <message>
        <source>A very similar memory exists: “{0}” ({1}). Update it or keep both?</source>
        <translation>Ya existe un recuerdo muy parecido: «{0}» ({1}). ¿Actualizarlo o conservar los dos?</translation>
    </message>
    <message>
        <source>&lt;b&gt;Memories used to answer&lt;/b&gt; “{0}”</source>
        <translation>&lt;b&gt;Recuerdos usados para responder&lt;/b&gt; «{0}»</translation>
    </message>
    <message>
        <source>Already remembered: “{0}”</source>
        <translation>Ya se recordaba: «{0}»</translation>
    </message>
    <message>
        <source>Updated: “{0}” → “{1}”</source>
        <translation>Actualizado: «{0}» → «{1}»</translation>
    </message>
    <message>
        <source>Remembered: “{0}”</source>
        <translation>Recordado: «{0}»</translation>
    </message>
    <message>
        <source>Deleted “{0}”. Undo brings it back (Ctrl+Z).</source>
        <translation>Se eliminó «{0}». Deshacer lo recupera (Ctrl+Z).</translation>
    </message>
    <message>
        <source>Undo {0} (Ctrl+Z)</source>
        <translation>Deshacer {0} (Ctrl+Z)</translation>
    </message>
    <message>
        <source>Undone: {0}</source>
        <translation>Deshecho: {0}</translation>
    </message>
    <message>
        <source>{0} of {1} re-embedded</source>
        <translation>{0} de {1} vectores recalculados</translation>
    </message>
    <message>
        <source>Re-embedded {0} memories: all are searched again.</source>
        <translation>Se recalcularon los vectores de {0} recuerdos: se vuelve a buscar en todos.</translation>
    </message>
    <message>
        <source>Re-embedding stopped; what was done is kept. Recall stays limited until it finishes.</source>
        <translation>Se detuvo el recálculo de vectores; lo hecho se conserva. La memoria seguirá limitada hasta que termine.</translation>
    </message>
</context>
<context>
    <name>MessageBubble</name>
    <message>
        <source>Remember</source>
        <extracomment>a ✓ [n] mark was clicked: memory n (1-based) of this answer&apos;s memories used &quot;Ask the model to rephrase&quot; was clicked the draft&apos;s withheld sentences are shown (folded by default: the link opens them)</extracomment>
        <translation>Recordar</translation>
    </message>
    <message>
        <source>Store this message as a memory</source>
        <translation>Guardar este mensaje como recuerdo</translation>
    </message>
    <message>
        <source>Ask the model to rephrase</source>
        <translation>Pedir reformulación</translation>
    </message>
    <message>
        <source>The model is rephrasing (shown only if every sentence checks out): {0}</source>
        <translation>El modelo está reformulando (solo se muestra si cada frase se comprueba): {0}</translation>
    </message>
    <message>
        <source>Memories used:</source>
        <translation>Recuerdos usados:</translation>
    </message>
    <message>
        <source>Withheld from the model&apos;s draft (not an answer):</source>
        <translation>Retenido del borrador del modelo (no es una respuesta):</translation>
    </message>
    <message>
        <source>Show what was withheld from the model&apos;s draft ({0})</source>
        <translation>Mostrar lo que se retuvo del borrador del modelo ({0})</translation>
    </message>
    <message>
        <source>Hide what was withheld</source>
        <translation>Ocultar lo retenido</translation>
    </message>
    <message>
        <source>✓ [n]: a memory you told me says it (click to see which)</source>
        <translation>✓ [n]: lo dice un recuerdo que me contaste (pulsa para ver cuál)</translation>
    </message>
    <message>
        <source>in grey italics: the model&apos;s own words, not from your memories</source>
        <translation>en cursiva gris: palabras del propio modelo, no de tus recuerdos</translation>
    </message>
    <message>
        <source>struck out: the model&apos;s draft, withheld as unsupported</source>
        <translation>tachado: el borrador del modelo, retenido por falta de respaldo</translation>
    </message>
    <message>
        <source>✓ [n]: stated by memory n of the memories used (click to select it)</source>
        <translation>✓ [n]: lo dice el recuerdo n de los usados (pulsa para seleccionarlo)</translation>
    </message>
</context>
<context>
    <name>MessageView</name>
    <message>
        <source>You</source>
        <extracomment>Copy (message or code block) put this text on the clipboard</extracomment>
        <translation>Tú</translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation>Asistente</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>Copiar</translation>
    </message>
    <message>
        <source>Copy the message</source>
        <translation>Copiar el mensaje</translation>
    </message>
    <message>
        <source>Edit</source>
        <translation>Editar</translation>
    </message>
    <message>
        <source>Edit this message and send it again</source>
        <translation>Editar este mensaje y enviarlo de nuevo</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>Regenerar</translation>
    </message>
    <message>
        <source>Ask the same question again</source>
        <translation>Hacer la misma pregunta otra vez</translation>
    </message>
</context>
<context>
    <name>MigrationDialog</name>
    <message>
        <source>Migrate to server</source>
        <extracomment>the dry run finished (the plan) — tests wait for it the migration ended (done, failed or cancelled): the map is worth measuring again</extracomment>
        <translation>Migrar al servidor</translation>
    </message>
    <message>
        <source>Copies the embedded data in {0} to the servers configured in Settings. Nothing embedded is deleted; if the copy is interrupted or cancelled, run it again to resume.</source>
        <translation>Copia los datos integrados de {0} a los servidores configurados en Configuración. No se elimina nada de lo integrado; si la copia se interrumpe o se cancela, vuelve a ejecutarla para reanudarla.</translation>
    </message>
    <message>
        <source>Datum</source>
        <translation>Dato</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>Acción</translation>
    </message>
    <message>
        <source>From</source>
        <translation>Desde</translation>
    </message>
    <message>
        <source>To</source>
        <translation>Hacia</translation>
    </message>
    <message>
        <source>Items</source>
        <translation>Elementos</translation>
    </message>
    <message>
        <source>State</source>
        <translation>Estado</translation>
    </message>
    <message>
        <source>What happens</source>
        <translation>Qué ocurre</translation>
    </message>
    <message>
        <source>only if the audit schema must be created (default: the configured DSN)</source>
        <translation>solo si hay que crear el esquema de auditoría (por defecto: el DSN configurado)</translation>
    </message>
    <message>
        <source>Postgres admin DSN</source>
        <translation>DSN de administración de Postgres</translation>
    </message>
    <message>
        <source>Switch to the server profile when done (at restart)</source>
        <translation>Cambiar al perfil de servidor al terminar (al reiniciar)</translation>
    </message>
    <message>
        <source>Migrate</source>
        <translation>Migrar</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Cerrar</translation>
    </message>
    <message>
        <source>Dry run: reading the embedded stores…</source>
        <translation>Simulación: leyendo los almacenes integrados…</translation>
    </message>
    <message>
        <source>Dry run — nothing has been written.</source>
        <translation>Simulación: no se ha escrito nada.</translation>
    </message>
    <message>
        <source>An unfinished migration to these servers will be resumed.</source>
        <translation>Se reanudará una migración sin terminar a estos servidores.</translation>
    </message>
    <message>
        <source>Problems (fix them, then try again):</source>
        <translation>Problemas (corrígelos y vuelve a intentarlo):</translation>
    </message>
    <message numerus="yes">
        <source>%n item(s) to copy or rebuild.</source>
        <translation>
            <numerusform>%n elemento para copiar o reconstruir.</numerusform>
            <numerusform>%n elementos para copiar o reconstruir.</numerusform>
        </translation>
    </message>
    <message>
        <source>The migration cannot start: see the problems above.</source>
        <translation>La migración no puede empezar: mira los problemas de arriba.</translation>
    </message>
    <message>
        <source>profile = server written to {0}; restart Custodia</source>
        <translation>profile = server escrito en {0}; reinicia Custodia</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Cancelar</translation>
    </message>
    <message>
        <source>Migrating…</source>
        <translation>Migrando…</translation>
    </message>
    <message>
        <source>Migration finished.</source>
        <translation>Migración terminada.</translation>
    </message>
    <message>
        <source>Done: every step finished (details above).</source>
        <translation>Hecho: todos los pasos han terminado (detalles arriba).</translation>
    </message>
    <message>
        <source>Nothing was read or changed.</source>
        <translation>No se leyó ni se cambió nada.</translation>
    </message>
    <message>
        <source>Cannot plan a migration: {0}</source>
        <translation>No se puede planificar una migración: {0}</translation>
    </message>
    <message>
        <source>Stopped: {0}</source>
        <translation>Detenida: {0}</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>Reintentar</translation>
    </message>
    <message>
        <source>Cancelled. Nothing embedded was touched; Migrate again to resume.</source>
        <translation>Cancelada. No se tocó nada de lo integrado; pulsa Migrar de nuevo para reanudar.</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>Reanudar</translation>
    </message>
</context>
<context>
    <name>ModelPicker</name>
    <message>
        <source>Model:</source>
        <extracomment>the combo box shows at least this many characters of a model&apos;s name, and at most what :func:`describe_choice` answers for a model that cannot generate (assistant, short text, tooltip) once the chosen model is loaded or refused the newest listing asked for: an older one that ends later is dropped</extracomment>
        <translation>Modelo:</translation>
    </message>
    <message>
        <source>Set by {0} in the environment for this session.</source>
        <translation>Definido por {0} en el entorno para esta sesión.</translation>
    </message>
    <message>
        <source>The model this assistant answers with (saved in custodia.toml)</source>
        <translation>El modelo con el que responde este asistente (guardado en custodia.toml)</translation>
    </message>
    <message>
        <source>loading {0}…</source>
        <translation>cargando {0}…</translation>
    </message>
    <message>
        <source>retrieval-only — {0}</source>
        <translation>solo recuperación — {0}</translation>
    </message>
    <message>
        <source>ready</source>
        <translation>listo</translation>
    </message>
    <message>
        <source>not saved</source>
        <translation>sin guardar</translation>
    </message>
    <message>
        <source>not loaded — {0}</source>
        <translation>sin cargar — {0}</translation>
    </message>
    <message>
        <source>unavailable</source>
        <translation>no disponible</translation>
    </message>
</context>
<context>
    <name>ModelsDialog</name>
    <message>
        <source>Models</source>
        <translation>Modelos</translation>
    </message>
    <message>
        <source>Add model file…</source>
        <extracomment>the newest listing asked for: an older one that ends later is dropped what the last add or remove did (kept above the count when the list is read again) removals that Undo can take back while the dialog is open (newest last)</extracomment>
        <translation>Añadir archivo de modelo…</translation>
    </message>
    <message>
        <source>Copy (or link) a .gguf file into the models folder</source>
        <translation>Copiar (o enlazar) un archivo .gguf en la carpeta de modelos</translation>
    </message>
    <message>
        <source>Add folder…</source>
        <translation>Añadir carpeta…</translation>
    </message>
    <message>
        <source>Also list the .gguf files of a folder you keep models in</source>
        <translation>Mostrar también los archivos .gguf de una carpeta donde guardes modelos</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>Actualizar</translation>
    </message>
    <message>
        <source>Cancel copy</source>
        <translation>Cancelar la copia</translation>
    </message>
    <message>
        <source>Reading the models folders…</source>
        <translation>Leyendo las carpetas de modelos…</translation>
    </message>
    <message>
        <source>GGUF files in: {0}
This machine: {1} of memory available of {2}.</source>
        <translation>Archivos GGUF en: {0}
Este equipo: {1} de memoria disponible de {2}.</translation>
    </message>
    <message>
        <source>Context limited to {0} tokens: {1}.</source>
        <translation>Contexto limitado a {0} tokens: {1}.</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>sí</translation>
    </message>
    <message>
        <source>no</source>
        <translation>no</translation>
    </message>
    <message>
        <source>{0} at {1} tokens</source>
        <translation>{0} con {1} tokens</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Modelo</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>Estado</translation>
    </message>
    <message>
        <source>Memory needed</source>
        <translation>Memoria necesaria</translation>
    </message>
    <message>
        <source>Context</source>
        <translation>Contexto</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>Tamaño</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>Parámetros</translation>
    </message>
    <message>
        <source>Quantisation</source>
        <translation>Cuantización</translation>
    </message>
    <message>
        <source>Architecture</source>
        <translation>Arquitectura</translation>
    </message>
    <message>
        <source>Chat template</source>
        <translation>Plantilla de chat</translation>
    </message>
    <message>
        <source>File</source>
        <translation>Archivo</translation>
    </message>
    <message>
        <source>Remove…</source>
        <translation>Quitar…</translation>
    </message>
    <message>
        <source>Unlink a linked model, or delete a copied one (Undo while this is open)</source>
        <translation>Desenlazar un modelo enlazado o eliminar uno copiado (se puede deshacer mientras esto esté abierto)</translation>
    </message>
    <message>
        <source>Undo remove</source>
        <translation>Deshacer la eliminación</translation>
    </message>
    <message>
        <source>The bundled model and {0} model file(s). Pick one for an assistant in its tab or in Settings.</source>
        <translation>El modelo incluido y {0} archivo(s) de modelo. Elige uno para un asistente en su pestaña o en Configuración.</translation>
    </message>
    <message>
        <source>Only the bundled model so far: add a .gguf file (an instruction-tuned one, e.g. &apos;…-Instruct-Q4_K_M.gguf&apos;), a folder that holds some, or use Tools ▸ Models ▸ Find models on this computer.</source>
        <translation>Por ahora solo el modelo incluido: añade un archivo .gguf (uno ajustado para instrucciones, p. ej. &apos;…-Instruct-Q4_K_M.gguf&apos;), una carpeta que los contenga, o usa Herramientas ▸ Modelos ▸ Buscar modelos en este equipo.</translation>
    </message>
    <message>
        <source>{0} (a link to {1})</source>
        <translation>{0} (un enlace a {1})</translation>
    </message>
    <message>
        <source>Used by: {0}</source>
        <translation>Lo usa: {0}</translation>
    </message>
    <message>
        <source>Could not read the models folders: {0}</source>
        <translation>No se pudieron leer las carpetas de modelos: {0}</translation>
    </message>
    <message>
        <source>Remove the link to {0}? The file itself stays where it is.</source>
        <translation>¿Quitar el enlace a {0}? El archivo en sí se queda donde está.</translation>
    </message>
    <message>
        <source>Delete {0} from the models folder?</source>
        <translation>¿Eliminar {0} de la carpeta de modelos?</translation>
    </message>
    <message>
        <source>{0} answer with it; they will use the bundled model.</source>
        <translation>{0} responde(n) con él; pasará(n) a usar el modelo incluido.</translation>
    </message>
    <message>
        <source>You can undo this until you close this window.</source>
        <translation>Puedes deshacerlo hasta que cierres esta ventana.</translation>
    </message>
    <message>
        <source>Remove model</source>
        <translation>Quitar el modelo</translation>
    </message>
    <message>
        <source>Not removed — {0}</source>
        <translation>No se quitó — {0}</translation>
    </message>
    <message>
        <source>Not put back — {0}</source>
        <translation>No se restauró — {0}</translation>
    </message>
    <message>
        <source>{0} is back.</source>
        <translation>{0} ha vuelto.</translation>
    </message>
    <message>
        <source>Add model file</source>
        <translation>Añadir archivo de modelo</translation>
    </message>
    <message>
        <source>GGUF models (*.gguf)</source>
        <translation>Modelos GGUF (*.gguf)</translation>
    </message>
    <message>
        <source>Copy {0} into the models folder, or link it where it is (no copy; moving or deleting the original breaks the link)?</source>
        <translation>¿Copiar {0} en la carpeta de modelos o enlazarlo donde está (sin copia; mover o eliminar el original rompe el enlace)?</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>Copiar</translation>
    </message>
    <message>
        <source>Link</source>
        <translation>Enlazar</translation>
    </message>
    <message>
        <source>Linking {0}…</source>
        <translation>Enlazando {0}…</translation>
    </message>
    <message>
        <source>Copying {0}…</source>
        <translation>Copiando {0}…</translation>
    </message>
    <message>
        <source>Added {0}.</source>
        <translation>Se añadió {0}.</translation>
    </message>
    <message>
        <source>Not added — {0}</source>
        <translation>No se añadió — {0}</translation>
    </message>
    <message>
        <source>Copy cancelled; nothing was added.</source>
        <translation>Copia cancelada; no se añadió nada.</translation>
    </message>
    <message>
        <source>Add a models folder</source>
        <translation>Añadir una carpeta de modelos</translation>
    </message>
</context>
<context>
    <name>MultiAgentTab</name>
    <message>
        <source>open sessions</source>
        <extracomment>the health layers in the user&apos;s words (the service&apos;s keys name the engine layers, which stay in the tooltip and the CLI)</extracomment>
        <translation>sesiones abiertas</translation>
    </message>
    <message>
        <source>recent sessions</source>
        <translation>sesiones recientes</translation>
    </message>
    <message>
        <source>saved sessions</source>
        <translation>sesiones guardadas</translation>
    </message>
    <message>
        <source>tickets</source>
        <translation>tiques</translation>
    </message>
    <message>
        <source>live feed</source>
        <translation>actividad en directo</translation>
    </message>
    <message>
        <source>semantic memory</source>
        <translation>memoria semántica</translation>
    </message>
    <message>
        <source>Describe a task for the team (planner, coder, researcher, reviewer)…</source>
        <extracomment>Run pressed, or Enter in the task field the tab&apos;s colours (the tab refreshes them in place on a theme switch)</extracomment>
        <translation>Describa una tarea para el equipo…</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>Ejecutar</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Cancelar</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>Reanudar</translation>
    </message>
    <message>
        <source>Continue the selected unfinished session</source>
        <translation>Continuar la sesión sin terminar seleccionada</translation>
    </message>
    <message>
        <source>Opening the session store…</source>
        <extracomment>the notice&apos;s &quot;Show it&quot; link: the session it talks about</extracomment>
        <translation>Abriendo el almacén de sesiones…</translation>
    </message>
    <message>
        <source>&lt;b&gt;Sessions&lt;/b&gt;</source>
        <extracomment>the filter changed, or Refresh was pressed: list again the user picked a session in the list: its id the list was (re)loaded: number of rows</extracomment>
        <translation>&lt;b&gt;Sesiones&lt;/b&gt;</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>Actualizar</translation>
    </message>
    <message>
        <source>Reload the list (sessions run elsewhere, e.g. from a terminal)</source>
        <translation>Volver a cargar la lista (sesiones ejecutadas en otro lugar, p. ej. desde una terminal)</translation>
    </message>
    <message>
        <source>All phases</source>
        <translation>Todas</translation>
    </message>
    <message>
        <source>Started</source>
        <translation>Inicio</translation>
    </message>
    <message>
        <source>Phase</source>
        <translation>Fase</translation>
    </message>
    <message>
        <source>Task</source>
        <translation>Tarea</translation>
    </message>
    <message>
        <source>&lt;b&gt;Live feed&lt;/b&gt;</source>
        <translation>&lt;b&gt;Actividad en directo&lt;/b&gt;</translation>
    </message>
    <message>
        <source>&lt;b&gt;Result&lt;/b&gt;</source>
        <extracomment>the outcomes a verification step may record (others are not shown) the user chose a file to export the result to</extracomment>
        <translation>&lt;b&gt;Resultado&lt;/b&gt;</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>Copiar</translation>
    </message>
    <message>
        <source>Copy the result as Markdown</source>
        <translation>Copiar el resultado como Markdown</translation>
    </message>
    <message>
        <source>Export…</source>
        <translation>Exportar…</translation>
    </message>
    <message>
        <source>Save the result as a Markdown file</source>
        <translation>Guardar el resultado como archivo Markdown</translation>
    </message>
    <message>
        <source>What ran</source>
        <translation>Qué se ejecutó</translation>
    </message>
    <message>
        <source>Outcome</source>
        <translation>Resultado</translation>
    </message>
    <message>
        <source>The final answer, assembled from the steps, appears here when a run ends.</source>
        <translation>Aquí aparece la respuesta final al terminar.</translation>
    </message>
    <message>
        <source>&lt;b&gt;Tickets&lt;/b&gt; (kept only until they expire)</source>
        <extracomment>Enter in the memory search: the query (&quot;&quot; clears the results) &quot;Re-embed all&quot; (or &quot;Cancel re-embedding&quot;) pressed the window closed: a listing that arrives after that starts no countdown</extracomment>
        <translation>&lt;b&gt;Tiques&lt;/b&gt; (hasta que caducan)</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>Paso</translation>
    </message>
    <message>
        <source>Held by</source>
        <translation>Titular</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>Estado</translation>
    </message>
    <message>
        <source>Expires in</source>
        <translation>Caduca</translation>
    </message>
    <message>
        <source>&lt;b&gt;Semantic memory&lt;/b&gt;</source>
        <translation>&lt;b&gt;Memoria semántica&lt;/b&gt;</translation>
    </message>
    <message>
        <source>Search past results, code, sessions…</source>
        <translation>Buscar resultados, código y sesiones anteriores…</translation>
    </message>
    <message>
        <source>Re-embed all</source>
        <translation>Recalcular vectores</translation>
    </message>
    <message>
        <source>Rebuild the semantic memory with the configured embedder</source>
        <translation>Reconstruir la memoria semántica con el vectorizador configurado</translation>
    </message>
    <message>
        <source>Nothing similar (similarity ≥ {0}); {1} weaker match(es) hidden.</source>
        <translation>Nada parecido (similitud ≥ {0}); {1} coincidencia(s) más débil(es) oculta(s).</translation>
    </message>
    <message>
        <source>{0} weaker match(es) below similarity {1} hidden.</source>
        <translation>{0} coincidencia(s) más débil(es) con similitud inferior a {1} oculta(s).</translation>
    </message>
    <message>
        <source>planning</source>
        <translation>planificando</translation>
    </message>
    <message>
        <source>working</source>
        <translation>trabajando</translation>
    </message>
    <message>
        <source>reviewing</source>
        <translation>revisando</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>fallida</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>cancelada</translation>
    </message>
    <message>
        <source>planner</source>
        <translation>planificador</translation>
    </message>
    <message>
        <source>coder</source>
        <translation>programador</translation>
    </message>
    <message>
        <source>researcher</source>
        <translation>investigador</translation>
    </message>
    <message>
        <source>tester</source>
        <translation>probador</translation>
    </message>
    <message>
        <source>reviewer</source>
        <translation>revisor</translation>
    </message>
    <message>
        <source>verified</source>
        <translation>verificado</translation>
    </message>
    <message>
        <source>failed verification</source>
        <translation>no superó la verificación</translation>
    </message>
    <message>
        <source>unverified draft</source>
        <translation>borrador sin verificar</translation>
    </message>
    <message>
        <source>Phase: no session selected</source>
        <translation>Fase: ninguna sesión seleccionada</translation>
    </message>
    <message>
        <source>interrupted</source>
        <translation>interrumpida</translation>
    </message>
    <message>
        <source>Phase: {0}</source>
        <translation>Fase: {0}</translation>
    </message>
    <message>
        <source>pid {0}</source>
        <translation>pid {0}</translation>
    </message>
    <message>
        <source>&lt;i&gt;(running in another Custodia process {0})&lt;/i&gt;</source>
        <translation>&lt;i&gt;(en ejecución en otro proceso de Custodia {0})&lt;/i&gt;</translation>
    </message>
    <message>
        <source>Stores: {0}</source>
        <translation>Almacenes: {0}</translation>
    </message>
    <message>
        <source>Every layer works.</source>
        <translation>Todas las capas funcionan.</translation>
    </message>
    <message>
        <source>Cancel the running session</source>
        <translation>Cancelar la sesión en curso</translation>
    </message>
    <message>
        <source>Cancel this session: {0}</source>
        <translation>Cancelar esta sesión: {0}</translation>
    </message>
    <message>
        <source>Another session is running: {0}. Select it in the list to cancel it.</source>
        <translation>Hay otra sesión en curso: {0}. Selecciónala en la lista para cancelarla.</translation>
    </message>
    <message>
        <source>A session is running: one at a time</source>
        <translation>Hay una sesión en curso: solo una cada vez</translation>
    </message>
    <message>
        <source>Run the task</source>
        <translation>Ejecutar la tarea</translation>
    </message>
    <message>
        <source>Another Custodia process is running this session ({0}); wait for it to finish, or stop it, then Refresh</source>
        <translation>Otro proceso de Custodia está ejecutando esta sesión ({0}); espera a que termine o detenlo, y después pulsa Actualizar</translation>
    </message>
    <message>
        <source>The embedding model changed: the semantic memory must be re-embedded before it can be searched or used by the experts.
{0}</source>
        <extracomment>a theme switch reaches a widget as one of these a run ended and its final state is drawn: session id, final phase (for testers) the session list was (re)loaded: number of rows a run was refused, nothing touched (another process runs it): session id, message the result was written to this file the semantic memory&apos;s search index (HNSW) was built: how many collections this tab&apos;s service, built on first use (only ever inside a worker job) which model it answers with (none: no picker; it keeps the model it was built with) what the tab knows; the panels draw it the semantic memory&apos;s HNSW build (a background job; yields to a run) the theme&apos;s colours, shared with the panels (refreshed in place)</extracomment>
        <translation>El modelo de vectores cambió: hay que recalcular los vectores de la memoria semántica antes de poder buscar en ella o de que la usen los expertos.
{0}</translation>
    </message>
    <message>
        <source>Building the search index of the semantic memory: {0} of {1}…</source>
        <translation>Creando el índice de búsqueda de la memoria semántica: {0} de {1}…</translation>
    </message>
    <message>
        <source>{0} (interrupted)</source>
        <translation>{0} (interrumpida)</translation>
    </message>
    <message>
        <source>{0} (running in another process, pid {1})</source>
        <translation>{0} (en ejecución en otro proceso, pid {1})</translation>
    </message>
    <message>
        <source>&lt;b&gt;Live feed&lt;/b&gt; — loading the session…</source>
        <translation>&lt;b&gt;Actividad en directo&lt;/b&gt; — cargando la sesión…</translation>
    </message>
    <message>
        <source>That session is not in any reachable store.</source>
        <translation>Esa sesión no está en ningún almacén accesible.</translation>
    </message>
    <message>
        <source>&lt;b&gt;Live feed&lt;/b&gt; — {0}</source>
        <translation>&lt;b&gt;Actividad en directo&lt;/b&gt; — {0}</translation>
    </message>
    <message>
        <source>&lt;b&gt;Result so far&lt;/b&gt; ({0})</source>
        <translation>&lt;b&gt;Resultado hasta ahora&lt;/b&gt; ({0})</translation>
    </message>
    <message>
        <source>this session finished before results were checked</source>
        <translation>esta sesión terminó antes de que se comprobaran los resultados</translation>
    </message>
    <message>
        <source>Nothing here was run: read it as the model&apos;s draft.</source>
        <translation>Aquí no se ejecutó nada: léelo como un borrador del modelo.</translation>
    </message>
    <message>
        <source>Step {0} ({1}): {2}</source>
        <translation>Paso {0} ({1}): {2}</translation>
    </message>
    <message>
        <source>Attempt {0}: {1}</source>
        <translation>Intento {0}: {1}</translation>
    </message>
    <message>
        <source>Tests: {0}. Sandbox: no network ({1}), {2} s, {3} MB.</source>
        <translation>Pruebas: {0}. Entorno aislado: sin red ({1}), {2} s, {3} MB.</translation>
    </message>
    <message>
        <source>none</source>
        <translation>ninguna</translation>
    </message>
    <message>
        <source>passed</source>
        <translation>superadas</translation>
    </message>
    <message>
        <source>could not run</source>
        <translation>no se pudo ejecutar</translation>
    </message>
    <message>
        <source>skipped</source>
        <translation>omitido</translation>
    </message>
    <message>
        <source>&lt;b&gt;Result&lt;/b&gt; — copied to the clipboard</source>
        <translation>&lt;b&gt;Resultado&lt;/b&gt; — copiado al portapapeles</translation>
    </message>
    <message>
        <source>Export the result as Markdown</source>
        <translation>Exportar el resultado como Markdown</translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation>Markdown (*.md)</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>Todos los archivos (*)</translation>
    </message>
    <message>
        <source>&lt;b&gt;Result&lt;/b&gt; — saved to {0}</source>
        <translation>&lt;b&gt;Resultado&lt;/b&gt; — guardado en {0}</translation>
    </message>
    <message>
        <source>session started</source>
        <translation>sesión iniciada</translation>
    </message>
    <message>
        <source>phase</source>
        <translation>fase</translation>
    </message>
    <message>
        <source>memory</source>
        <translation>memoria</translation>
    </message>
    <message>
        <source>result</source>
        <translation>resultado</translation>
    </message>
    <message>
        <source>ticket</source>
        <translation>tique</translation>
    </message>
    <message>
        <source>warning</source>
        <translation>aviso</translation>
    </message>
    <message>
        <source>finished</source>
        <translation>terminada</translation>
    </message>
    <message numerus="yes">
        <source>%n item(s) remembered ({0}).</source>
        <translation>
            <numerusform>%n elemento en memoria ({0}).</numerusform>
            <numerusform>%n elementos en memoria ({0}).</numerusform>
        </translation>
    </message>
    <message>
        <source>checking</source>
        <translation>comprobando</translation>
    </message>
    <message>
        <source>check</source>
        <translation>comprobación</translation>
    </message>
    <message>
        <source>retry</source>
        <translation>reintento</translation>
    </message>
    <message>
        <source>Live feed unavailable: {0}</source>
        <translation>Actividad en directo no disponible: {0}</translation>
    </message>
    <message>
        <source>Type a task first.</source>
        <translation>Escribe primero una tarea.</translation>
    </message>
    <message>
        <source>Running: {0}</source>
        <translation>En ejecución: {0}</translation>
    </message>
    <message>
        <source>“{0}”</source>
        <translation>«{0}»</translation>
    </message>
    <message>
        <source>The session {0} stopped: {1}</source>
        <translation>La sesión {0} se detuvo: {1}</translation>
    </message>
    <message>
        <source>The session stopped: {0}</source>
        <translation>La sesión se detuvo: {0}</translation>
    </message>
    <message>
        <source>The session {0} was cancelled. Resume continues where it stopped.</source>
        <translation>Se canceló la sesión {0}. Reanudar continúa donde se detuvo.</translation>
    </message>
    <message>
        <source>Cancelled. Resume continues where it stopped.</source>
        <translation>Cancelada. Reanudar continúa donde se detuvo.</translation>
    </message>
    <message>
        <source>The session “{0}” ended: {1}.</source>
        <translation>La sesión «{0}» terminó: {1}.</translation>
    </message>
    <message>
        <source>open</source>
        <translation>abierto</translation>
    </message>
    <message>
        <source>in review</source>
        <translation>en revisión</translation>
    </message>
    <message>
        <source>closed</source>
        <translation>cerrado</translation>
    </message>
    <message>
        <source>Ticket {0}, handed by {1}</source>
        <translation>Tique {0}, entregado por {1}</translation>
    </message>
    <message>
        <source>expired</source>
        <translation>caducado</translation>
    </message>
    <message>
        <source>Searching the semantic memory…</source>
        <translation>Buscando en la memoria semántica…</translation>
    </message>
    <message>
        <source>Nothing related is remembered yet.</source>
        <translation>Todavía no hay nada relacionado en memoria.</translation>
    </message>
    <message>
        <source>Memory search failed: {0}</source>
        <translation>La búsqueda en la memoria falló: {0}</translation>
    </message>
    <message>
        <source>Cancel re-embedding</source>
        <translation>Cancelar el recálculo de vectores</translation>
    </message>
    <message>
        <source>Re-embedding: {0} of {1}</source>
        <translation>Recalculando vectores: {0} de {1}</translation>
    </message>
    <message>
        <source>Re-embedding cancelled; the memory is as it was.</source>
        <translation>Recálculo de vectores cancelado; la memoria queda como estaba.</translation>
    </message>
</context>
<context>
    <name>ProofDialog</name>
    <message>
        <source>Verify a proof file</source>
        <extracomment>the check&apos;s outcome: (ok, message)</extracomment>
        <translation>Verificar un archivo de prueba</translation>
    </message>
    <message>
        <source>Proof file</source>
        <extracomment>each &quot;Browse…&quot; button: the field it fills, and its label (the file dialog&apos;s title)</extracomment>
        <translation>Archivo de prueba</translation>
    </message>
    <message>
        <source>Verifier key</source>
        <translation>Clave de verificación</translation>
    </message>
    <message>
        <source>Record text (optional)</source>
        <translation>Texto del registro (opcional)</translation>
    </message>
    <message>
        <source>Older checkpoint (consistency)</source>
        <translation>Punto de control anterior (coherencia)</translation>
    </message>
    <message>
        <source>Newer checkpoint (consistency)</source>
        <translation>Punto de control posterior (coherencia)</translation>
    </message>
    <message>
        <source>An inclusion proof needs the proof file; a consistency proof also both checkpoints.</source>
        <translation>Una prueba de inclusión necesita el archivo de prueba; una prueba de coherencia, además, los dos puntos de control.</translation>
    </message>
    <message>
        <source>Check</source>
        <translation>Comprobar</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>Examinar…</translation>
    </message>
    <message>
        <source>proof</source>
        <translation>prueba</translation>
    </message>
    <message>
        <source>older checkpoint</source>
        <translation>punto de control anterior</translation>
    </message>
    <message>
        <source>newer checkpoint</source>
        <translation>punto de control posterior</translation>
    </message>
    <message>
        <source>cannot read the record</source>
        <translation>no se puede leer el registro</translation>
    </message>
    <message>
        <source>Does NOT verify: {0}</source>
        <translation>NO se verifica: {0}</translation>
    </message>
    <message>
        <source>choose the {0} file</source>
        <translation>elige el archivo de {0}</translation>
    </message>
    <message>
        <source>cannot read the {0}</source>
        <translation>no se puede leer el archivo de {0}</translation>
    </message>
</context>
<context>
    <name>ProposalRow</name>
    <message>
        <source>Update “{0}” to “{1}”? (similarity {2})</source>
        <translation>¿Actualizar «{0}» a «{1}»? (similitud {2})</translation>
    </message>
    <message>
        <source>Remember “{0}”?</source>
        <translation>¿Recordar «{0}»?</translation>
    </message>
    <message>
        <source>Update</source>
        <translation>Actualizar</translation>
    </message>
    <message>
        <source>Remember</source>
        <translation>Recordar</translation>
    </message>
    <message>
        <source>Keep both</source>
        <translation>Conservar los dos</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>Descartar</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <source>Settings</source>
        <extracomment>settings that only a server setup fills in (the servers section is unfolded when one is)</extracomment>
        <translation>Configuración</translation>
    </message>
    <message>
        <source>Profile</source>
        <translation>Perfil</translation>
    </message>
    <message>
        <source>Sessions, tickets, feed</source>
        <translation>Sesiones, tiques, actividad</translation>
    </message>
    <message>
        <source>Audit log</source>
        <translation>Registro de auditoría</translation>
    </message>
    <message>
        <source>Graph</source>
        <translation>Grafo</translation>
    </message>
    <message>
        <source>Redis URL</source>
        <translation>URL de Redis</translation>
    </message>
    <message>
        <source>Postgres DSN</source>
        <translation>DSN de Postgres</translation>
    </message>
    <message>
        <source>Neo4j URI</source>
        <translation>URI de Neo4j</translation>
    </message>
    <message>
        <source>Neo4j user</source>
        <translation>Usuario de Neo4j</translation>
    </message>
    <message>
        <source>Qdrant URL (empty: local)</source>
        <translation>URL de Qdrant (vacía: local)</translation>
    </message>
    <message>
        <source>Chroma URL (empty: local)</source>
        <translation>URL de Chroma (vacía: local)</translation>
    </message>
    <message>
        <source>Models</source>
        <translation>Modelos</translation>
    </message>
    <message>
        <source>Your data is kept in {0}. The models and their generation settings apply from each assistant&apos;s next answer; the other settings apply after a restart.</source>
        <extracomment>``models.&lt;assistant&gt;`` and ``generation.&lt;assistant&gt;.&lt;setting&gt;`` -&gt; its widget under each assistant&apos;s context size: the most its model was trained on, and why what the model lists offer (the models folders are read by the caller, in a worker)</extracomment>
        <translation>Tus datos se guardan en {0}. Los modelos y sus ajustes de generación se aplican a partir de la próxima respuesta de cada asistente; los demás ajustes, tras reiniciar.</translation>
    </message>
    <message>
        <source>Every assistant&apos;s model unless it has its own below (gguf:&lt;path or name&gt;, ollama:&lt;model&gt;, openai:&lt;model&gt; can be typed)</source>
        <translation>El modelo de todos los asistentes salvo que tengan uno propio abajo (se puede escribir gguf:&lt;ruta o nombre&gt;, ollama:&lt;modelo&gt;, openai:&lt;modelo&gt;)</translation>
    </message>
    <message>
        <source>Chat model (default)</source>
        <translation>Modelo de chat general</translation>
    </message>
    <message>
        <source>Embedder (after a restart)</source>
        <translation>Vectorizador (tras reiniciar)</translation>
    </message>
    <message>
        <source>Stores and servers (after a restart)</source>
        <translation>Almacenes y servidores (tras reiniciar)</translation>
    </message>
    <message>
        <source>Each store is chosen on its own; &apos;server&apos; makes a store use its server when its address is set. Applied at the next start of Custodia.</source>
        <translation>Cada almacén se elige por separado; «servidor» hace que un almacén use su servidor cuando su dirección está definida. Se aplica en el próximo inicio de Custodia.</translation>
    </message>
    <message>
        <source>Ollama URL</source>
        <translation>URL de Ollama</translation>
    </message>
    <message>
        <source>OpenAI-compatible URL</source>
        <translation>URL compatible con OpenAI</translation>
    </message>
    <message>
        <source>Network timeout (s)</source>
        <translation>Espera de red (s)</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>Idioma</translation>
    </message>
    <message>
        <source>Applied at the next start of Custodia.</source>
        <translation>Se aplica en el próximo inicio de Custodia.</translation>
    </message>
    <message>
        <source>Assistants: model and generation settings</source>
        <translation>Asistentes: modelo y ajustes de generación</translation>
    </message>
    <message>
        <source>Applied from each assistant&apos;s next answer.</source>
        <translation>Se aplica a partir de la próxima respuesta de cada asistente.</translation>
    </message>
    <message>
        <source>Empty: the default chat model</source>
        <translation>Vacío: el modelo de chat predeterminado</translation>
    </message>
    <message>
        <source>Set by {0} in the environment; the file keeps its own value.</source>
        <translation>Definido por {0} en el entorno; el archivo conserva su propio valor.</translation>
    </message>
    <message>
        <source>Model (empty: the default)</source>
        <translation>Modelo (vacío: general)</translation>
    </message>
    <message>
        <source>{0} was trained on {1} tokens: the context size is at most that.</source>
        <translation>{0} se entrenó con {1} tokens: el tamaño del contexto es como máximo ese.</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>Temperatura</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Max tokens</source>
        <translation>Máx. de tokens</translation>
    </message>
    <message>
        <source>as asked</source>
        <translation>lo pedido</translation>
    </message>
    <message>
        <source>Context size (tokens)</source>
        <translation>Contexto (tokens)</translation>
    </message>
    <message>
        <source>Threads</source>
        <translation>Hilos</translation>
    </message>
    <message>
        <source>automatic</source>
        <translation>automático</translation>
    </message>
    <message>
        <source>Repeat penalty</source>
        <translation>Penalizar repetición</translation>
    </message>
    <message>
        <source>Added after the assistant&apos;s own instructions</source>
        <translation>Se añade tras las instrucciones propias del asistente</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>Instrucciones extra</translation>
    </message>
    <message>
        <source>Not saved — {0}</source>
        <translation>No se guardó — {0}</translation>
    </message>
    <message>
        <source>Not saved — cannot write the file: {0}</source>
        <translation>No se guardó — no se puede escribir el archivo: {0}</translation>
    </message>
    <message>
        <source>Saved. The stores, servers and embedder chosen here are used from the next start of Custodia; nothing stored is lost by switching. The models and generation settings apply from each assistant&apos;s next answer.</source>
        <translation>Guardado. Los almacenes, servidores y el vectorizador elegidos aquí se usan a partir del próximo inicio de Custodia; al cambiar no se pierde nada de lo guardado. Los modelos y ajustes de generación se aplican a partir de la próxima respuesta de cada asistente.</translation>
    </message>
    <message>
        <source>The new language is used from the next start.</source>
        <translation>El idioma nuevo se usará a partir del próximo inicio.</translation>
    </message>
    <message>
        <source>Settings saved</source>
        <translation>Configuración guardada</translation>
    </message>
</context>
<context>
    <name>ShortcutsDialog</name>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>Atajos de teclado</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>Acción</translation>
    </message>
    <message>
        <source>Shortcut</source>
        <translation>Atajo</translation>
    </message>
</context>
<context>
    <name>StorageMapView</name>
    <message>
        <source>Profile &lt;b&gt;{0}&lt;/b&gt; — data dir {1}</source>
        <extracomment>a pale background per durability class (the seed&apos;s three answers) emitted after each refresh with the rows shown (tests wait for it)</extracomment>
        <translation>Perfil &lt;b&gt;{0}&lt;/b&gt; — carpeta de datos {1}</translation>
    </message>
    <message>
        <source>Datum</source>
        <translation>Dato</translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation>Asistente</translation>
    </message>
    <message>
        <source>Engine now</source>
        <translation>Motor actual</translation>
    </message>
    <message>
        <source>Class</source>
        <translation>Clase</translation>
    </message>
    <message>
        <source>Items</source>
        <translation>Elementos</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>Tamaño</translation>
    </message>
    <message>
        <source>Health</source>
        <translation>Estado</translation>
    </message>
    <message>
        <source>If it is lost</source>
        <translation>Si se pierde</translation>
    </message>
    <message>
        <source>If this datum is lost, what happens? &lt;b&gt;recomputable&lt;/b&gt;: it is recomputed (a cache, a derived index) · &lt;b&gt;history&lt;/b&gt;: history is lost (SQLite, JSON files: back them up) · &lt;b&gt;provable&lt;/b&gt;: I could no longer prove nobody touched it (the hash-chained audit log and its checkpoints)</source>
        <translation>Si se pierde este dato, ¿qué ocurre? &lt;b&gt;recalculable&lt;/b&gt;: se vuelve a calcular (una caché, un índice derivado) · &lt;b&gt;historial&lt;/b&gt;: se pierde el historial (SQLite, archivos JSON: haz copias de seguridad) · &lt;b&gt;demostrable&lt;/b&gt;: ya no podría demostrar que nadie lo tocó (el registro de auditoría encadenado por hashes y sus puntos de control)</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>Actualizar</translation>
    </message>
    <message>
        <source>Migrate to server…</source>
        <translation>Migrar al servidor…</translation>
    </message>
    <message>
        <source>Copy the embedded data to the servers configured in Settings (a dry run first shows what will be copied or rebuilt; nothing embedded is deleted)</source>
        <translation>Copiar los datos integrados a los servidores configurados en Configuración (primero una simulación muestra qué se copiará o reconstruirá; no se elimina nada de lo integrado)</translation>
    </message>
    <message>
        <source>Measuring the stores…</source>
        <translation>Midiendo los almacenes…</translation>
    </message>
    <message numerus="yes">
        <source>%n store(s) need attention: {0}</source>
        <translation>
            <numerusform>%n almacén necesita atención: {0}</numerusform>
            <numerusform>%n almacenes necesitan atención: {0}</numerusform>
        </translation>
    </message>
    <message>
        <source>Every store is readable.</source>
        <translation>Todos los almacenes se pueden leer.</translation>
    </message>
    <message>
        <source>{0}: {1}</source>
        <translation>{0}: {1}</translation>
    </message>
    <message>
        <source>Where: {0}</source>
        <translation>Dónde: {0}</translation>
    </message>
    <message>
        <source>Could not measure the stores: {0}</source>
        <translation>No se pudieron medir los almacenes: {0}</translation>
    </message>
</context>
<context>
    <name>ThreadList</name>
    <message>
        <source>yesterday</source>
        <extracomment>Qt&apos;s QWIDGETSIZE_MAX (no maximum width)</extracomment>
        <translation>ayer</translation>
    </message>
    <message>
        <source>&lt;b&gt;Threads&lt;/b&gt;</source>
        <extracomment>a thread was chosen: its id &quot;New&quot; was clicked: the tab starts an empty thread (created on its first message) the list was folded to a strip (True) or opened (False), by its toggle or from code a listing read in the worker pool is shown the width the open list starts with (its titles end in &quot;…&quot;) the index&apos;s work, off the GUI thread and in order (shared with the keeper) the threads shown, as the last listing read them deleted while this list is shown, newest last: Undo restores them folded to a strip holding only the toggle (see :meth:`set_folded`) folded or opened by the user&apos;s own click (None: as the window chose; kept)</extracomment>
        <translation>&lt;b&gt;Hilos&lt;/b&gt;</translation>
    </message>
    <message>
        <source>New</source>
        <translation>Nuevo</translation>
    </message>
    <message>
        <source>Start a new thread</source>
        <translation>Empezar un hilo nuevo</translation>
    </message>
    <message>
        <source>Rename…</source>
        <translation>Renombrar…</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>Eliminar</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>Deshacer</translation>
    </message>
    <message>
        <source>Show the list of threads</source>
        <extracomment>what folding hides (the toggle stays)</extracomment>
        <translation>Mostrar la lista de hilos</translation>
    </message>
    <message>
        <source>Hide the list of threads</source>
        <translation>Ocultar la lista de hilos</translation>
    </message>
    <message>
        <source>The list of threads cannot be saved right now; the chat goes on.</source>
        <translation>La lista de hilos no se puede guardar ahora mismo; el chat continúa.</translation>
    </message>
    <message>
        <source>{0}
last used {1}; {2} turn(s)</source>
        <translation>{0}
último uso {1}; {2} turno(s)</translation>
    </message>
    <message>
        <source>Rename thread</source>
        <translation>Renombrar el hilo</translation>
    </message>
    <message>
        <source>Title:</source>
        <translation>Título:</translation>
    </message>
    <message>
        <source>a thread</source>
        <translation>un hilo</translation>
    </message>
    <message>
        <source>Deleted “{0}”.</source>
        <translation>Se eliminó «{0}».</translation>
    </message>
</context>
<context>
    <name>TutorTab</name>
    <message>
        <source>User:</source>
        <extracomment>the knowledge base is indexed and questions can be asked (the :class:`Status`) a turn was answered, shown and audited (the :class:`Turn`) an import finished (the :class:`ImportReport`) this tab&apos;s service, built on first use (only ever inside a worker job) which model it answers with (none: no picker; it keeps the model it was built with) this thread&apos;s earlier turns, rendered (newest last); New thread clears it what the thread&apos;s last question was understood as, and whose it was: the next question of the same user may follow it up (another user&apos;s never does: their words would be searched, shown and sealed in this user&apos;s record) whether the notes covered it (after an uncovered one, only &quot;and …?&quot; follows it) this question&apos;s composed answer, shown (and audited) while the model drafts</extracomment>
        <translation>Usuario:</translation>
    </message>
    <message>
        <source>Who is asking: the shared notes and this user&apos;s own notes are searched</source>
        <translation>Quién pregunta: se busca en los apuntes compartidos y en los apuntes propios de este usuario</translation>
    </message>
    <message>
        <source>The knowledge base is indexed when first shown.</source>
        <translation>La base de conocimientos se indexa la primera vez que se muestra.</translation>
    </message>
    <message>
        <source>Import notes…</source>
        <translation>Importar apuntes…</translation>
    </message>
    <message>
        <source>Add your own Markdown or text notes to this user&apos;s scope</source>
        <translation>Añadir tus propios apuntes en Markdown o texto al ámbito de este usuario</translation>
    </message>
    <message>
        <source>Open inspector</source>
        <translation>Inspector</translation>
    </message>
    <message>
        <source>Review the audit log of every turn</source>
        <translation>Revisar el registro de auditoría de cada turno</translation>
    </message>
    <message>
        <source>For study, not for clinical decisions.</source>
        <translation>Para estudiar, no para tomar decisiones clínicas.</translation>
    </message>
    <message>
        <source>Ask a study question. Answers cite their notes: click a citation to read it.</source>
        <translation>Haz una pregunta de estudio. Pulsa una cita para leer su apunte.</translation>
    </message>
    <message>
        <source>Question (Enter to ask)…</source>
        <translation>Pregunta (Intro)…</translation>
    </message>
    <message>
        <source>Ask</source>
        <translation>Preguntar</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Detener</translation>
    </message>
    <message>
        <source>Ask the model to rephrase</source>
        <translation>Pedir reformulación</translation>
    </message>
    <message>
        <source>Ask the chat model for its own answer to the last question: it is shown only if every sentence is supported by your notes</source>
        <translation>Pedir al modelo de chat su propia respuesta a la última pregunta: solo se muestra si cada frase tiene respaldo en tus apuntes</translation>
    </message>
    <message>
        <source>New thread</source>
        <translation>Hilo nuevo</translation>
    </message>
    <message>
        <source>Clear the earlier questions from view (every turn stays in the audit log)</source>
        <translation>Quitar de la vista las preguntas anteriores (cada turno sigue en el registro de auditoría)</translation>
    </message>
    <message>
        <source>&lt;b&gt;Sources&lt;/b&gt;</source>
        <translation>&lt;b&gt;Fuentes&lt;/b&gt;</translation>
    </message>
    <message>
        <source>#</source>
        <translation>N.º</translation>
    </message>
    <message>
        <source>Note</source>
        <translation>Apunte</translation>
    </message>
    <message>
        <source>Found by</source>
        <translation>Hallado por</translation>
    </message>
    <message>
        <source>The selected passage appears here.</source>
        <translation>Aquí aparece el fragmento seleccionado.</translation>
    </message>
    <message>
        <source>&lt;b&gt;Entities around the question&lt;/b&gt;</source>
        <translation>&lt;b&gt;Entidades en torno a la pregunta&lt;/b&gt;</translation>
    </message>
    <message>
        <source>Indexing the study notes…</source>
        <translation>Indexando los apuntes de estudio…</translation>
    </message>
    <message>
        <source>The knowledge base could not be opened: {0}</source>
        <translation>No se pudo abrir la base de conocimientos: {0}</translation>
    </message>
    <message>
        <source>{0} notes · {1} passages · {2} entities</source>
        <translation>{0} apuntes · {1} fragmentos · {2} entidades</translation>
    </message>
    <message>
        <source>vectors unavailable</source>
        <translation>vectores no disponibles</translation>
    </message>
    <message>
        <source>graph: {0} relations</source>
        <translation>grafo: {0} relaciones</translation>
    </message>
    <message>
        <source>graph unavailable</source>
        <translation>grafo no disponible</translation>
    </message>
    <message>
        <source>Searching your notes…</source>
        <translation>Buscando en tus apuntes…</translation>
    </message>
    <message>
        <source>Answering…</source>
        <translation>Respondiendo…</translation>
    </message>
    <message>
        <source>Found {0} passages; checking what they say…</source>
        <translation>Se encontraron {0} fragmentos; comprobando lo que dicen…</translation>
    </message>
    <message>
        <source>Stopped; recorded in the audit log as #{0}.</source>
        <translation>Detenido; anotado en el registro de auditoría como n.º {0}.</translation>
    </message>
    <message>
        <source>Recorded in the audit log as #{0}.</source>
        <translation>Anotado en el registro de auditoría como n.º {0}.</translation>
    </message>
    <message>
        <source>The model is drafting an answer ({0} words so far). It is checked against your notes before anything is shown.</source>
        <translation>El modelo está redactando una respuesta ({0} palabras hasta ahora). Se contrasta con tus apuntes antes de mostrar nada.</translation>
    </message>
    <message>
        <source>The model may reword this answer ({0} words so far): its draft replaces it only if every sentence is supported by your notes.</source>
        <translation>El modelo puede reformular esta respuesta ({0} palabras hasta ahora): su borrador la sustituye solo si cada frase tiene respaldo en tus apuntes.</translation>
    </message>
    <message>
        <source>Sources</source>
        <translation>Fuentes</translation>
    </message>
    <message>
        <source>Passages searched — none of them answers this question</source>
        <translation>Fragmentos consultados: ninguno responde a esta pregunta</translation>
    </message>
    <message>
        <source>The model&apos;s own answer — not shown as fact ({0})</source>
        <translation>La respuesta propia del modelo, no mostrada como un hecho ({0})</translation>
    </message>
    <message>
        <source>unsupported by your notes</source>
        <translation>sin respaldo en tus apuntes</translation>
    </message>
    <message>
        <source>supported</source>
        <translation>respaldado</translation>
    </message>
    <message>
        <source>graph</source>
        <comment>retrieval method</comment>
        <translation>grafo</translation>
    </message>
    <message>
        <source>vector</source>
        <comment>retrieval method</comment>
        <translation>búsqueda vectorial</translation>
    </message>
    <message>
        <source>keyword</source>
        <comment>retrieval method</comment>
        <translation>búsqueda por palabras</translation>
    </message>
    <message>
        <source>multilingual</source>
        <comment>retrieval method</comment>
        <translation>búsqueda multilingüe</translation>
    </message>
    <message>
        <source>Degraded retrieval: the graph is unavailable, so answers come from vector and keyword retrieval only (hover for details).</source>
        <translation>Recuperación degradada: el grafo no está disponible, así que las respuestas proceden solo de la búsqueda por vectores y por palabras clave (pasa el ratón por encima para ver detalles).</translation>
    </message>
    <message>
        <source>Degraded retrieval: {0} unavailable, so answers come from the other retrieval methods only (hover for details).</source>
        <translation>Recuperación degradada: {0} no disponible, así que las respuestas proceden solo de los demás métodos de recuperación (pasa el ratón por encima para ver detalles).</translation>
    </message>
    <message>
        <source>Something went wrong (see the log): {0}</source>
        <translation>Algo salió mal (véase el registro): {0}</translation>
    </message>
    <message>
        <source>The model&apos;s draft was not recorded, so it is not shown: {0}</source>
        <translation>El borrador del modelo no se anotó, así que no se muestra: {0}</translation>
    </message>
    <message>
        <source>Not answered: the turn was not recorded, so nothing is shown.</source>
        <translation>Sin respuesta: el turno no se anotó, así que no se muestra nada.</translation>
    </message>
    <message>
        <source>Stopped.</source>
        <translation>Detenido.</translation>
    </message>
    <message>
        <source>Stopping… (the turn is still recorded)</source>
        <translation>Deteniendo… (el turno se anota igualmente)</translation>
    </message>
    <message>
        <source>Source: {0}</source>
        <translation>Fuente: {0}</translation>
    </message>
    <message>
        <source>Found by: {0}</source>
        <translation>Hallado por: {0}</translation>
    </message>
    <message>
        <source>No known entity in this question.</source>
        <translation>No hay ninguna entidad conocida en esta pregunta.</translation>
    </message>
    <message>
        <source>{0} — {1}: together in {2} passages</source>
        <translation>{0} — {1}: juntos en {2} fragmentos</translation>
    </message>
    <message>
        <source>Import notes for {0}</source>
        <translation>Importar apuntes para {0}</translation>
    </message>
    <message>
        <source>Notes (*.md *.markdown *.txt)</source>
        <translation>Apuntes (*.md *.markdown *.txt)</translation>
    </message>
    <message>
        <source>cannot read {0}</source>
        <translation>no se puede leer {0}</translation>
    </message>
    <message>
        <source>skipped {0}</source>
        <translation>se omitió {0}</translation>
    </message>
    <message>
        <source>Nothing was imported for {0}: {1}</source>
        <translation>No se importó nada para {0}: {1}</translation>
    </message>
    <message>
        <source>Imported for {0}: {1}</source>
        <translation>Importado para {0}: {1}</translation>
    </message>
</context>
<context>
    <name>UserGuideDialog</name>
    <message>
        <source>Custodia user guide</source>
        <extracomment>the guide in another language than English: USER_GUIDE.&lt;lang&gt;.md beside it</extracomment>
        <translation>Guía del usuario de Custodia</translation>
    </message>
    <message>
        <source>The user guide ({0}) is not installed with this copy of Custodia.</source>
        <extracomment>each screenshot&apos;s own size (the page shows it narrower when the window is)</extracomment>
        <translation>La guía del usuario ({0}) no está instalada con esta copia de Custodia.</translation>
    </message>
</context>
<context>
    <name>WelcomeBanner</name>
    <message>
        <source>a team of AI experts plans, does and reviews a task for you</source>
        <extracomment>tab objectName -&gt; what it is for (shown in the welcome and the user guide)</extracomment>
        <translation>un equipo de expertos de IA planifica, realiza y revisa una tarea por ti</translation>
    </message>
    <message>
        <source>a chat that remembers what you tell it, across sessions</source>
        <translation>un chat que recuerda lo que le cuentas, de una sesión a otra</translation>
    </message>
    <message>
        <source>your chat history, searchable, encrypted if you want</source>
        <translation>tu historial de chat, con búsqueda y cifrado si lo deseas</translation>
    </message>
    <message>
        <source>questions on clinical study notes, answered with their sources</source>
        <translation>preguntas sobre apuntes clínicos de estudio, respondidas con sus fuentes</translation>
    </message>
    <message>
        <source>&lt;b&gt;Welcome to Custodia.&lt;/b&gt; Four assistants that run on this computer; nothing leaves it.&lt;ul style=&apos;margin:2px 0&apos;&gt;{0}&lt;/ul&gt;Help ▸ User guide explains more; Help ▸ Keyboard shortcuts lists the keys.</source>
        <extracomment>the user asked to use the model :meth:`offer_model` offered</extracomment>
        <translation>&lt;b&gt;Bienvenido a Custodia.&lt;/b&gt; Cuatro asistentes que funcionan en este equipo; nada sale de él.&lt;ul style=&apos;margin:2px 0&apos;&gt;{0}&lt;/ul&gt;Ayuda ▸ Guía del usuario explica más; Ayuda ▸ Atajos de teclado enumera las teclas.</translation>
    </message>
    <message>
        <source>Use it</source>
        <translation>Usarlo</translation>
    </message>
    <message>
        <source>Got it</source>
        <translation>Entendido</translation>
    </message>
    <message>
        <source>&lt;b&gt;A better model is already on this computer:&lt;/b&gt; {0} (from {1}; needs about {2} of memory). Custodia can use it where it is — nothing is copied.</source>
        <translation>&lt;b&gt;Ya hay un modelo mejor en este equipo:&lt;/b&gt; {0} (de {1}; necesita unos {2} de memoria). Custodia puede usarlo donde está: no se copia nada.</translation>
    </message>
</context>
<context>
    <name>WindowThreads</name>
    <message>
        <source>(erased: this person&apos;s records can no longer be read)</source>
        <extracomment>from this window width the tutor&apos;s thread list starts open (a 1366×768 laptop&apos;s window is 1100 px wide or more); below it, folded to its toggle: the tutor&apos;s row of buttons needs the room (it started folded under a 1000-px-wide *screen*: on a laptop the user did not see their threads)</extracomment>
        <translation>(borrado: los registros de esta persona ya no se pueden leer)</translation>
    </message>
</context>
<context>
    <name>config</name>
    <message>
        <source>embedded</source>
        <extracomment>the translators installed (kept referenced: Qt does not own them) QLocale&apos;s default before :func:`install`, put back by :func:`uninstall` configuration values shown to the user (custodia.toml keeps them as they are)</extracomment>
        <translation>integrado</translation>
    </message>
    <message>
        <source>server</source>
        <translation>servidor</translation>
    </message>
    <message>
        <source>memory</source>
        <translation>memoria</translation>
    </message>
    <message>
        <source>System language ({0})</source>
        <translation>Idioma del sistema ({0})</translation>
    </message>
</context>
<context>
    <name>doctor</name>
    <message>
        <source>not usable</source>
        <translation>no se puede usar</translation>
    </message>
    <message>
        <source>○ Ollama: not used by this configuration (optional; none running at {0})</source>
        <translation>○ Ollama: esta configuración no lo usa (opcional; no hay ninguno en ejecución en {0})</translation>
    </message>
    <message>
        <source>○ {0}: optional, not in use — {1}</source>
        <translation>○ {0}: opcional, sin usar — {1}</translation>
    </message>
</context>
<context>
    <name>startup</name>
    <message>
        <source>Custodia: configuration error</source>
        <translation>Custodia: error de configuración</translation>
    </message>
    <message>
        <source>The configuration cannot be used:

{0}

Fix custodia.toml or the environment and start again.</source>
        <translation>No se puede usar la configuración:

{0}

Corrige custodia.toml o el entorno y vuelve a iniciar.</translation>
    </message>
</context>
<context>
    <name>tabs</name>
    <message>
        <source>Multi-agent</source>
        <extracomment>the module whose ``create(service, models, workers, parent)`` builds the tab the tab&apos;s title, marked for Qt Linguist (context &quot;tabs&quot;) ``&quot;module:function&quot;``: ``turn(services, progress) -&gt; detail``, one real turn of the assistant checked end to end (raises ``StepFailed``); &quot;&quot; : the self-test has none its short name in the status bar (&quot;Tutor: SmolLM2 …&quot;), marked for Qt Linguist (context &quot;MainWindow&quot;); &quot;&quot; : the title the jobs a quit would end: (job name prefix, what the user is told, marked for Qt Linguist in context &quot;MainWindow&quot;); its other jobs are reads a quit loses nothing by name (as in :mod:`backends.assistants`) -&gt; its tab</extracomment>
        <translation>Multiagente</translation>
    </message>
    <message>
        <source>Memories</source>
        <translation>Recuerdos</translation>
    </message>
    <message>
        <source>Conversations</source>
        <translation>Conversaciones</translation>
    </message>
    <message>
        <source>Clinical tutor</source>
        <translation>Tutor clínico</translation>
    </message>
</context>
<context>
    <name>window</name>
    <message>
        <source>Audit inspector</source>
        <extracomment>the audit service, built on first use (in a worker: the pane&apos;s first job)</extracomment>
        <translation>Inspector de auditoría</translation>
    </message>
    <message>
        <source>Storage map</source>
        <translation>Mapa de almacenamiento</translation>
    </message>
</context>
</TS>
