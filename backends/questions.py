"""What a question asks, for the answer policy (:mod:`backends.answers`): shared by the
assistants that answer from what the user told them (memories, conversations).

- :func:`about_user` decides whether a question asks about the user (their life, people,
  things, dates, health): a first-person possessive ("my", "mi", "mis") or a first-person
  subject that is not asking for advice ("What can't I eat?" is; "How do I boil an egg?" and
  "Should I water succulents?" are not); in Spanish a first-person verb or "me" before a verb
  ("¿A qué me dedico?").
- :func:`asked` splits its content words into *subject* words (what it is about) and
  *kind-of-answer* words ("which **city**", "qué **medicamento**"); :func:`matches` and
  :func:`answering` tell which texts answer it: every subject word must stand in one text —
  directly, through a light stem shared by English and Spanish, or through a small list of
  everyday related words (:data:`RELATED`: "sibling" — sister, brother) — and the kind of
  answer too when this module can recognise its members (:data:`KINDS`: a date for "which
  day", an instrument for "which instrument"; a number for "how many" / "¿cuántos?", a name
  for "what are … called" / "¿cómo se llama …?"). Words for one thing (:data:`SYNONYMS`:
  "kids" / "children" / "hijos", "mum" / "madre") stand for each other. A text holding only
  some is *close*.
- :func:`restate` says a first-person text back to the user in the second person, in
  English or Spanish.

Lexical and small by design; measured on bench/data/memory_answer_eval.json (docs/
BENCHMARKS.md) with a held-out part no word list was tuned on.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from backends import grounding, i18n


def _split(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# -- is the question about the user? --------------------------------------------------------

_EN_POSSESSIVE = re.compile(r"\b(?:my|mine|myself)\b", re.IGNORECASE)
_EN_SUBJECT = re.compile(r"\b(?:i|i'm|i've|i'd|am\s+i|me)\b", re.IGNORECASE)
#: first-person questions that ask for advice or a how-to, not about the user
_EN_ADVICE = re.compile(
    r"\b(?:how\s+(?:do|can|should|would|could|to)\s+i|should\s+i|could\s+i|"
    r"where\s+can\s+i\s+(?:buy|get|find\s+(?:a|an|some))|"
    r"tell\s+me\s+(?:a|an|some)|give\s+me|can\s+you|could\s+you|suggest)\b",
    re.IGNORECASE,
)
_ES_POSSESSIVE = re.compile(r"\b(?:mi|mis|mío|mía|míos|mías|conmigo)\b", re.IGNORECASE)
_ES_ADVICE = re.compile(
    r"\b(?:cómo|como)\s+(?:puedo|debo|hago|se)\b|\b(?:dame|dime\s+(?:un|una)|recomiéndame|"
    r"puedes|podrías)\b",
    re.IGNORECASE,
)
#: Spanish first-person verbs a question about the user uses ("¿Dónde vivo?", "¿Cuánto mido?")
_ES_FIRST_PERSON = _set("""
    soy estoy tengo vivo trabajo estudio mido peso uso hablo juego como bebo tomo pago llevo
    nací fui estuve tuve viví trabajé estudié desayuné comí cené decidí dije hice compré
    practico prefiero odio conduzco toco corro cocino necesito quiero conozco sé puedo
    aprendo dedico llamo levanto acuesto
    """)
_ES_CLITIC = re.compile(r"\bme\s+(?!\w+(?:r|rme)\b)\w+", re.IGNORECASE)


def about_user(question: str) -> bool:
    """Whether ``question`` asks about the user (see the module doc)."""
    if _EN_POSSESSIVE.search(question) or _ES_POSSESSIVE.search(question):
        return True
    if _EN_ADVICE.search(question) or _ES_ADVICE.search(question):
        return False
    if re.search(r"\bi\b|\bi'm\b|\bam\s+i\b", question, re.IGNORECASE):
        return True
    if language(question) != "es":
        return False
    tokens = [t.casefold() for t in re.findall(r"[^\W\d_]+", question)]
    if any(t in _ES_FIRST_PERSON for t in tokens) or "yo" in tokens:
        return True
    return bool(_ES_CLITIC.search(question))


# -- does a memory answer it? ---------------------------------------------------------------

#: words that ask nothing in themselves: which thing is asked about is in the other words
GENERIC = _set("""
    name named call called llama llaman llamaba nombre know tell remember told say said
    see find use usar uso get got thing things kind sort type tipo tell most best good least
    main really much many well closest favourite favorite number numero number's nombre
    va voy hace hago haces tengo tiene have has had dices dije dijiste sabes recuerdas
    cual cuál mucho muy quien quién what's who's where's when's how's what're
    estoy soy es eres está era fue será son eran fueron estaba i'm i've i'd i'll you're
    we're it's that's
    """)
#: words that name the kind of answer asked for when they follow "how" ("how old", "how far")
ATTRIBUTES = _set("old far long often tall big")

#: everyday words a memory may use for a question's word (question word -> memory words)
RELATED: dict[str, tuple[str, ...]] = {
    "sibling": ("sister", "brother", "hermana", "hermano"),
    "siblings": ("sister", "brother", "hermana", "hermano"),
    "mum": ("mother", "mom", "madre", "mama"),
    "mom": ("mother", "mum", "madre", "mama"),
    "mother": ("mum", "mom", "madre"),
    "dad": ("father", "padre", "papa"),
    "father": ("dad", "padre"),
    "granny": ("grandmother", "grandma", "abuela"),
    "grandma": ("grandmother", "granny", "abuela"),
    "grandpa": ("grandfather", "abuelo"),
    "partner": ("husband", "wife", "boyfriend", "girlfriend", "pareja"),
    "pareja": ("marido", "mujer", "esposo", "esposa", "novio", "novia", "partner"),
    "city": ("live", "lives", "living", "town", "vive", "vivo"),
    "living": ("work", "works", "job", "trabajo"),
    "job": ("work", "works", "trabajo", "trabaja"),
    "dedico": ("trabajo", "trabaja", "profesion", "work"),
    "trabaja": ("trabajo", "es", "work"),
    "eat": ("allergic", "alergico", "food", "vegetarian", "vegan", "meat", "comer", "comida"),
    "meat": ("vegetarian", "vegan", "vegetariano", "vegetariana"),
    "food": ("eat", "dish", "comida", "plato"),
    "drive": ("car", "coche"),
    "travel": ("went", "go", "trip", "holiday", "visit", "viaje"),
    "holidays": ("holiday",),
    "trip": ("went", "holiday", "travel", "viaje"),
    "medication": ("take", "takes", "pill", "pills", "medicine", "tablet", "tablets"),
    "medicine": ("take", "takes", "pill", "pills", "medication", "tablet", "tablets"),
    "languages": ("speak", "speaks", "idioma", "idiomas", "habla", "hablo"),
    "language": ("speak", "speaks", "idioma", "idiomas", "habla", "hablo"),
    "idioma": ("aleman", "ingles", "frances", "italiano", "language", "hablo", "estudio"),
    "mobile": ("phone", "telephone", "movil", "telefono"),
    "phone": ("mobile", "telephone", "movil", "telefono"),
    "doctor": ("gp", "dr", "medico", "medica", "doctora"),
    "doctora": ("medica", "medico", "doctor", "gp", "dr"),
    "medico": ("medica", "doctora", "doctor", "gp", "dr"),
    "like": ("favourite", "favorite", "love", "loves", "enjoy", "prefer", "encanta", "gusta"),
    "love": ("favourite", "favorite", "like", "encanta", "gusta"),
    "gusta": ("encanta", "favorito", "favorita", "like", "love"),
    "prefiero": ("favorito", "favorita", "gusta", "encanta"),
    "dislike": ("hate", "hates", "detest", "odio", "stand"),
    "scared": ("afraid", "fear", "frightened", "miedo"),
    "afraid": ("scared", "fear", "miedo"),
    "break": ("broke", "broken"),
    "e-mail": ("email",),
    "mail": ("email", "correo"),
    "email": ("mail", "correo"),
    "movie": ("film", "pelicula"),
    "film": ("movie", "pelicula"),
    "address": ("email", "direccion"),
    "aprendiendo": ("estudio", "estudia", "aprendo", "clases"),
    "practico": ("juego", "hago", "entreno", "juega"),
    "deporte": ("futbol", "tenis", "baloncesto", "correr", "nadar"),
    "pago": ("euros", "cuesta", "precio", "alquiler"),
    "enfermedad": ("diabetes", "asma", "hipertension", "alergia", "asthma"),
    "far": ("km", "miles", "kilometres", "kilometros"),
    "see": ("appointment", "cita"),
    "run": ("running", "correr"),
    "pay": ("paid", "euros", "cost", "price", "bought", "ordered"),
    "fly": ("flight", "flights", "vuelo"),
    "fiesta": ("cumpleaños", "celebracion", "party", "cena"),
    "staying": ("hotel", "stay", "albergo", "hostal"),
    "study": ("studies", "studying", "estudia", "estudio"),
    "studying": ("studies", "study", "estudia"),
}
#: words for one thing, any of which a memory may use for any other (English and Spanish):
#: "kids" / "children" / "hijos", "mum" / "madre"; a word's more specific kin go in RELATED
SYNONYMS: tuple[tuple[str, ...], ...] = (
    _split("kids kid children child hijos niños niñas críos crios peques"),
    _split("mother mum mom mummy mommy madre mamá mama"),
    _split("father dad daddy padre papá papa"),
    _split("grandmother grandma granny nan abuela"),
    _split("grandfather grandpa granddad abuelo"),
    _split("grandchildren grandkids nietos"),
    _split("husband esposo marido"),
    _split("wife esposa mujer"),
    _split("brother hermano"),
    _split("sister hermana"),
    _split("son hijo"),
    _split("daughter hija"),
    _split("aunt tía tia"),
    _split("uncle tío tio"),
    _split("cousin primo prima"),
    _split("nephew sobrino"),
    _split("niece sobrina"),
    _split("friend amigo amiga"),
    _split("boss jefe jefa"),
    _split("dog perro perra"),
    _split("cat gato gata"),
    _split("house home casa"),
    _split("flat apartment piso apartamento"),
    _split("birthday cumpleaños cumple"),
    _split("school colegio escuela cole"),
    _split("live lives vive vives vivo viven"),
    _split("born nació nacio nací naci nacieron"),
)
#: a word and its more specific kin (one way: "children" may be "a son", not the reverse)
_KIN = {
    "children": _split("son sons daughter daughters hijo hija"),
    "kids": _split("son sons daughter daughters hijo hija"),
    "hijos": _split("son daughter hija"),
    "parents": _split("mother father mum dad madre padre"),
    "padres": _split("madre padre mother father"),
    "pet": _split("dog cat perro gato"),
    "pets": _split("dog cat perro gato"),
    "mascota": _split("perro gato dog cat"),
    "mascotas": _split("perro gato dog cat"),
    "family": _split("mother father sister brother kids children wife husband"),
    "familia": _split("madre padre hermana hermano hijos esposa marido"),
}
for _group in SYNONYMS:
    for _word in _group:
        _key = grounding.fold(_word)
        _others = tuple(w for w in _group if w != _word) + _KIN.get(_key, ())
        RELATED[_key] = tuple(dict.fromkeys(RELATED.get(_key, ()) + _others))
for _key, _words in _KIN.items():
    RELATED.setdefault(_key, _words)

#: a few phrases read as one word before the question is split ("family doctor" is a GP)
PHRASES = (
    (re.compile(r"\bfamily\s+doctor\b", re.I), "gp"),
    (re.compile(r"\bgeneral\s+practitioner\b", re.I), "gp"),
    (re.compile(r"\bwhere\s+am\s+i\s+from\b", re.I), "where was I born"),
    (re.compile(r"\bde\s+d[oó]nde\s+soy\b", re.I), "dónde nací"),
    (re.compile(r"\bfor\s+a\s+living\b", re.I), "living"),
    (re.compile(r"\be-mail\b", re.I), "email"),
    (re.compile(r"\bend(?:ed)?\s+up\b", re.I), ""),
)
#: irregular English forms read as their verb ("broke" is "break")
IRREGULAR = {
    "went": "go",
    "broke": "break",
    "broken": "break",
    "bought": "buy",
    "born": "born",
    "was": "be",
    "ran": "run",
}
_RELATED_BY_ROOT: dict[str, tuple[str, ...]] = {}
for _key, _words in RELATED.items():
    _RELATED_BY_ROOT.setdefault(grounding.normal(IRREGULAR.get(_key, _key)), _words)

#: what a question asks for by its form rather than by a word a memory would repeat: a
#: number ("how many", "¿cuántos?"), a name ("what are … called", "¿cómo se llama …?")
NUMBER_KIND = "#number"
NAME_KIND = "#name"
_PLACE_PREPOSITIONS = _set("in at from near en de desde cerca")
_HOW_MANY_ES = _set("cuanto cuantos cuanta cuantas")
_NAME_WORDS = _set("name names named call called llama llaman llamo nombre nombres")
_NUMBER_WORDS = _set("""
    one two three four five six seven eight nine ten eleven twelve twenty thirty hundred
    couple dozen uno una dos tres cuatro cinco seis siete ocho nueve diez once doce veinte
    treinta cien
    """)
_WH = _set(
    "what which whose que qué cual cuál cuales cuáles cuanto cuánto cuanta cuánta "
    "cuantos cuántos cuantas cuántas"
)
_AUX = _set("""
    is are was were do does did am 's can could will would should has have had
    es son era fue está están hay se me te le lo la el los las un una de del en a al
    """)


def _root(word: str) -> str:
    """The form two words are compared in: folded, an irregular verb read as its base, then
    the light stem of :func:`grounding.normal`."""
    word = grounding.fold(word)
    return grounding.normal(IRREGULAR.get(word, word))


#: Spanish words whose last letter is a person's sex: "hermano" never matches "hermana"
_GENDERED = _set("""
    hermano hermana abuelo abuela tio tia primo prima hijo hija nieto nieta sobrino sobrina
    suegro suegra cunado cunada novio novia esposo esposa
    """)


def _same(a: str, b: str) -> bool:
    """Whether two roots are one word across English and Spanish endings: equal, or sharing
    a prefix of at least five letters that leaves at most three letters of the longer one
    ("alergia" / "alérgico", "cumplir" / "cumple"; not "breakfast" / "break")."""
    if a == b or (min(len(a), len(b)) >= 3 and a.removesuffix("s") == b.removesuffix("s")):
        return True  # a plural the light stem keeps ("cats" / "cat")
    if a in _GENDERED and b in _GENDERED:
        return False
    common = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common += 1
    return common >= max(5, max(len(a), len(b)) - 3)


def _tokens(text: str) -> list[str]:
    for pattern, replacement in PHRASES:
        text = pattern.sub(replacement, text)
    # "my dog's toy" is about the dog
    return [w[:-2] if w.endswith("'s") and len(w) > 3 else w for w in grounding.words(text)]


def _content_tokens(text: str) -> list[str]:
    stop = grounding.STOPWORDS | grounding.QUESTION_WORDS_ES | grounding.NEGATORS
    return [
        t
        for t in _tokens(text)
        if t not in stop and (len(t) > 1 or t.isdigit()) and not t.endswith("n't")
    ]


#: possessives that say whose, not what ("mis hijos" is about the children)
_POSSESSIVES = _set("my your mi mis tu tus su sus")


def _generic(token: str) -> bool:
    """A word that asks nothing in itself (:data:`GENERIC`, :data:`_NAME_WORDS`)."""
    return token in GENERIC or grounding.fold(token) in _NAME_WORDS


@dataclass(frozen=True)
class Asked:
    """A question's words as the memory answer reads them."""

    #: words one memory must hold for it to answer (after :data:`RELATED`)
    subject: tuple[str, ...]
    #: words naming the kind of answer wanted ("which city"): a bonus, not a requirement
    kind: tuple[str, ...]


def asked(question: str) -> Asked:
    """The subject and kind-of-answer words of ``question``."""
    tokens = _tokens(question)
    kind: list[str] = []
    for i, token in enumerate(tokens[:-1]):
        following = tokens[i + 1]
        if token in ("what", "which", "que", "cual", "cuanto", "cuantos", "cuantas") and (
            following not in _AUX
            and following not in grounding.STOPWORDS
            and following not in grounding.NEGATORS
            and following not in GENERIC
            and not following.endswith("n't")
            and len(following) > 1
        ):
            kind.append(following)
        if token == "how" and following in ATTRIBUTES:
            kind.append(following)
    folded = [grounding.fold(t) for t in tokens]
    counted = [
        grounding.fold(tokens[i + 1])
        for i, t in enumerate(folded[:-1])
        if t in _HOW_MANY_ES or (t == "how" and folded[i + 1] in ("many", "much"))
    ]
    if counted:
        # "¿cuántos hijos?": the children are the subject, a number the kind of answer
        kind = [k for k in kind if grounding.fold(k) not in counted]
        kind.append(NUMBER_KIND)
    if any(t in _NAME_WORDS for t in folded):
        kind.append(NAME_KIND)
    subject = [
        t
        for t in _content_tokens(question)
        if not _generic(t) and t not in kind and t not in _WH and t not in _POSSESSIVES
    ]
    return Asked(tuple(dict.fromkeys(subject)), tuple(dict.fromkeys(kind)))


def _related(word: str) -> tuple[str, ...]:
    """The :data:`RELATED` words of ``word``, or of its root ("daughters": "daughter")."""
    folded = grounding.fold(word)
    if folded in RELATED:
        return RELATED[folded]
    return _RELATED_BY_ROOT.get(_root(word), ())


def _holds(memory_roots: set[str], word: str) -> bool:
    wanted = [_root(word)] + [_root(r) for r in _related(word)]
    return any(_same(w, have) for w in wanted for have in memory_roots)


#: kinds of answer a memory holds when it holds a value of that kind ("which day": a date)
_TIME_KINDS = _set("day date year time month dia fecha ano hora mes")
_PLACE_KINDS = _set("city town country place ciudad pais barrio pueblo sitio")
_WEEKDAYS_MONTHS = _set("""
    monday tuesday wednesday thursday friday saturday sunday lunes martes miercoles jueves
    viernes sabado domingo january february march april may june july august september
    october november december enero febrero marzo abril mayo junio julio agosto septiembre
    octubre noviembre diciembre
    """)


#: everyday kinds of answer and members a memory names them by ("which instrument": piano):
#: a kind listed here is required of the memory; a kind not listed is not (it cannot be told)
KINDS: dict[str, tuple[str, ...]] = {
    "job": _split(
        "nurse doctor teacher engineer firefighter lawyer accountant programmer developer "
        "designer architect cook chef waiter driver electrician plumber nurse police officer "
        "student retired manager cleaner carpenter mechanic pharmacist dentist vet "
        "enfermera enfermero medica medico profesora profesor ingeniera ingeniero bombero "
        "bombera abogada abogado cocinera cocinero camarera camarero conductor conductora "
        "electricista fontanero policia estudiante jubilada jubilado farmaceutica "
        "farmaceutico work works trabajo trabaja"
    ),
    "instrument": _split(
        "piano guitar violin cello drums flute saxophone trumpet bass ukulele clarinet "
        "guitarra violin violonchelo bateria flauta saxofon trompeta bajo clarinete"
    ),
    "colour": _split(
        "red green blue yellow black white orange purple pink brown grey gray "
        "rojo roja verde azul amarillo amarilla negro negra blanco blanca naranja morado "
        "morada rosa marron gris"
    ),
    "herb": _split(
        "coriander cilantro basil parsley mint rosemary thyme oregano dill sage "
        "albahaca perejil menta romero tomillo oregano eneldo salvia"
    ),
    "car": _split(
        "toyota seat renault ford volkswagen bmw audi mercedes tesla fiat peugeot citroen "
        "kia hyundai nissan honda opel skoda mazda volvo dacia car coche"
    ),
    "sport": _split(
        "football soccer tennis basketball running swimming cycling golf padel yoga "
        "futbol tenis baloncesto correr natacion ciclismo golf padel yoga"
    ),
    "dish": _split(
        "paella sushi pizza pasta tortilla lasagne curry salad soup burger tacos "
        "gazpacho croquetas ensalada sopa food comida"
    ),
    "degree": _split(
        "medicine engineering law nursing architecture economics physics "
        "medicina ingenieria derecho enfermeria arquitectura economia fisica studies "
        "estudia"
    ),
    "language": _split(
        "english french german spanish italian portuguese catalan chinese japanese "
        "arabic russian dutch ingles frances aleman espanol castellano italiano portugues catalan "
        "chino japones arabe ruso speak speaks hablo habla"
    ),
    "drug": _split(
        "penicillin penicilina metformin metformina ibuprofen ibuprofeno paracetamol "
        "insulin insulina aspirin aspirina amoxicillin amoxicilina omeprazol omeprazole "
        "take takes tomo toma"
    ),
}
#: the words a question names each kind by
KIND_NAMES = {
    "job": _split("job jobs profession occupation trabajo profesion oficio trabaja"),
    "instrument": _split("instrument instrumento"),
    "colour": _split("colour color"),
    "herb": _split("herb herbs hierba especia spice"),
    "car": _split("car coche vehicle vehiculo"),
    "sport": _split("sport sports deporte"),
    "dish": _split("dish plato meal food comida"),
    "degree": _split("degree carrera course"),
    "language": _split("language languages idioma idiomas lengua"),
    "drug": _split("medication medicine drug medicamento medicina pill"),
}
_KIND_OF = {
    grounding.normal(grounding.fold(name)): kind
    for kind, names in KIND_NAMES.items()
    for name in names
}


def _holds_kind(memory: str, roots: set[str], word: str, *, strict: bool = False) -> bool:
    """Whether ``memory`` holds an answer of the kind ``word`` names: the word itself (or a
    related one), a date for "which day", a proper name for "which city"."""
    tokens = memory.split()
    if word == NUMBER_KIND:
        return any(c.isdigit() for c in memory) or any(
            grounding.fold(t.strip(",.;:")) in _NUMBER_WORDS for t in tokens
        )
    if word == NAME_KIND:  # a proper name past the first word ("… kids, Leo and Mia"), not
        # a place ("… que viven en Murcia")
        return any(
            t[:1].isupper()
            and t.strip(",.;:") not in ("I", "I'm")
            and grounding.fold(before) not in _PLACE_PREPOSITIONS
            for before, t in itertools.pairwise(tokens)
        )
    if word in ATTRIBUTES and not strict:  # "how old are my kids": a measure, in digits
        return any(c.isdigit() for c in memory) or _holds(roots, word)
    if _holds(roots, word):
        return True
    folded = grounding.fold(word)
    if folded in _TIME_KINDS:
        return any(c.isdigit() for c in memory) or any(
            grounding.fold(t.strip(",.")) in _WEEKDAYS_MONTHS for t in tokens
        )
    if folded in _PLACE_KINDS:
        return any(t[:1].isupper() for t in tokens[1:])
    kind = _KIND_OF.get(grounding.normal(folded))
    if kind is None:
        # a kind this module cannot recognise is not asked of the memory — unless it is
        # all the question asks ("¿Cuánto mido?")
        return not strict
    return any(_same(_root(member), have) for member in KINDS[kind] for have in roots)


@dataclass(frozen=True)
class Match:
    """How well one memory answers a question."""

    index: int  # 0-based into the memories given
    held: int  # subject words held
    subject: int  # subject words asked
    kind: int  # kind-of-answer words held
    similarity: float = 0.0

    #: kind-of-answer words asked
    kinds: int = 0

    @property
    def answers(self) -> bool:
        """Every subject word held, and the kind of answer asked for ("which car") held too
        unless two subject words or more pin the memory down ("¿En qué ciudad vive mi
        hermano?"); a question with no subject word: its kind of answer held."""
        if not self.subject:
            return self.kind > 0
        if self.held < self.subject:
            return False
        return not self.kinds or self.kind > 0 or self.held >= 2

    @property
    def score(self) -> float:
        share = self.held / self.subject if self.subject else 0.0
        return share + 0.5 * self.kind + 0.5 * self.similarity


def matches(
    question: str, memories: Sequence[str], similarities: Sequence[float] = ()
) -> list[Match]:
    """Each memory scored against ``question``, best first."""
    wanted = asked(question)
    out: list[Match] = []
    for i, text in enumerate(memories):
        roots = {_root(t) for t in _content_tokens(text)}
        held = sum(_holds(roots, w) for w in wanted.subject)
        strict = not wanted.subject
        kind = sum(_holds_kind(text, roots, w, strict=strict) for w in wanted.kind)
        similarity = similarities[i] if i < len(similarities) else 0.0
        out.append(Match(i, held, len(wanted.subject), kind, similarity, len(wanted.kind)))
    out.sort(key=lambda m: -m.score)
    return out


def held(text: str, words: Sequence[str]) -> int:
    """How many of ``words`` ``text`` holds (as :func:`matches` reads them)."""
    roots = {_root(t) for t in _content_tokens(text)}
    return sum(_holds(roots, w) for w in words)


def answering(
    question: str, memories: Sequence[str], similarities: Sequence[float] = (), most: int = 2
) -> list[Match]:
    """The memories that answer ``question`` (:attr:`Match.answers`), best first: the best
    and those scoring close to it, at most ``most``."""
    found = [m for m in matches(question, memories, similarities) if m.answers]
    if not found:
        return []
    best = found[0].score
    return [m for m in found if m.score >= 0.85 * best][:most]


# -- restating a memory to the user ---------------------------------------------------------

EN_SWAPS = {
    "i": "you",
    "i'm": "you're",
    "i've": "you've",
    "i'd": "you'd",
    "i'll": "you'll",
    "im": "you're",
    "my": "your",
    "mine": "yours",
    "myself": "yourself",
    "me": "you",
    "we": "you",
    "our": "your",
    "ours": "yours",
    "us": "you",
    "ourselves": "yourselves",
}
#: Spanish first-person verbs and their second-person forms (others are quoted as told)
ES_VERBS = {
    "soy": "eres",
    "estoy": "estás",
    "tengo": "tienes",
    "voy": "vas",
    "he": "has",
    "hago": "haces",
    "sé": "sabes",
    "nací": "naciste",
    "fui": "fuiste",
    "estuve": "estuviste",
    "tuve": "tuviste",
    "hice": "hiciste",
    "dije": "dijiste",
    "puedo": "puedes",
    "quiero": "quieres",
    "juego": "juegas",
    "vivo": "vives",
    "viví": "viviste",
    "trabajo": "trabajas",
    "trabajé": "trabajaste",
    "estudio": "estudias",
    "estudié": "estudiaste",
    "como": "comes",
    "bebo": "bebes",
    "hablo": "hablas",
    "tomo": "tomas",
    "pago": "pagas",
    "uso": "usas",
    "llevo": "llevas",
    "prefiero": "prefieres",
    "odio": "odias",
    "necesito": "necesitas",
    "conduzco": "conduces",
    "escribo": "escribes",
    "leo": "lees",
    "corro": "corres",
    "toco": "tocas",
    "cocino": "cocinas",
    "mido": "mides",
    "peso": "pesas",
    "practico": "practicas",
    "aprendo": "aprendes",
    "conozco": "conoces",
    "compré": "compraste",
    "decidí": "decidiste",
    "me": "te",
}
ES_SWAPS = {
    "mi": "tu",
    "mis": "tus",
    "mío": "tuyo",
    "mía": "tuya",
    "míos": "tuyos",
    "mías": "tuyas",
    "me": "te",
    "yo": "tú",
    "conmigo": "contigo",
    "nosotros": "vosotros",
    "nuestro": "vuestro",
    "nuestra": "vuestra",
    "nuestros": "vuestros",
    "nuestras": "vuestras",
}
_ES_MARKS = _set(
    "mi mis el la los las un una de del en y que es son con para por al se me yo muy mío mía"
) | frozenset(k for k in ES_VERBS if k != "me")
_EN_MARKS = _set("i my the a an is are was in on at of and to with i'm me")
#: words after which a Spanish first-person verb may stand ("no tengo", "yo soy", "ya vivo")
_ES_BEFORE_VERB = _set("yo no ya también tambien siempre nunca ahora todavía")


def _language_marks(text: str) -> tuple[int, int]:
    """How many Spanish and English function words ``text`` holds."""
    tokens = [t.casefold() for t in re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", text)]
    spanish = sum(t in _ES_MARKS for t in tokens) + 2 * any(c in text for c in "ñ¿¡")
    english = sum(t in _EN_MARKS for t in tokens)
    return spanish, english


def is_spanish(text: str) -> bool:
    """Whether a memory is Spanish (by its function words), to restate it in Spanish."""
    spanish, english = _language_marks(text)
    return spanish > english


#: words that already address someone: a memory holding one ("You recommended ibuprofen for
#: my headache", "Le di a mi hermano tu libro") cannot be turned to the second person without
#: changing who did what, so it is quoted as told
_SECOND_PERSON = _set(
    "you your yours yourself yourselves you're you've you'll you'd "
    "tu tus tú te ti contigo usted ustedes vosotros vosotras os vuestro vuestra tuyo tuya"
)


def _restatable(text: str) -> bool:
    """Whether :func:`restate` can say ``text`` back without changing its meaning: its
    language is clear (no tie of function words: "Me llamo Ana" is one "me" each way) and
    it does not already address someone."""
    spanish, english = _language_marks(text)
    if spanish == english:
        return False
    tokens = {t.casefold() for t in re.findall(r"[^\W\d_]+(?:['’][^\W\d_]+)?", text)}
    if spanish > english and any(t.endswith(("amos", "emos", "imos")) for t in tokens):
        return False  # "Mi hermano y yo vivimos": the verb would not agree with "tú"
    return not (tokens & _SECOND_PERSON)


_TOKEN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?|\S", re.UNICODE)


def _same_case(word: str, like: str) -> str:
    if like[:1].isupper() and (len(like) == 1 or not like.isupper() or like == "I"):
        return word[:1].upper() + word[1:]
    return word


def restate(memory: str) -> str:
    """``memory`` said back to the user: first person turned to second, in its language.

    "My sister lives in Valencia" → "Your sister lives in Valencia"; "I'm allergic to
    peanuts" → "You're allergic to peanuts"; "Mi hermana vive en Valencia" → "Tu hermana
    vive en Valencia"; "Soy alérgico a la penicilina" → "Eres alérgico a la penicilina". A
    Spanish memory starting with a first-person verb this module does not know is quoted:
    "Me dijiste: «…»"."""
    text = " ".join(memory.split()).rstrip(" .")
    if not text:
        return text
    spanish = is_spanish(text)
    if not _restatable(text):  # quoted as told, never said back with its meaning changed
        return f"Me dijiste: «{text}»" if spanish else f"You told me: “{text}”"
    out: list[str] = []
    pieces = re.split(r"(\s+)", text)
    word_index = 0
    previous = ""
    for piece in pieces:
        if not piece or piece.isspace():
            out.append(piece)
            continue
        match = re.match(r"^([^\w']*)([\w'’]+)(.*)$", piece, re.UNICODE)
        if match is None:
            out.append(piece)
            continue
        lead, word, tail = match.groups()
        key = word.casefold().replace("’", "'")
        swapped = _swapped(word, key, word_index, previous, spanish)
        if swapped is not None:
            word = _same_case(swapped, word) if word_index == 0 else swapped
        out.append(lead + word + tail)
        previous = key
        word_index += 1
    said = "".join(out)
    if not spanish:
        said = re.sub(r"\byou am\b", "you are", said, flags=re.IGNORECASE)
        said = re.sub(r"\byou was\b", "you were", said, flags=re.IGNORECASE)
    elif _unknown_spanish_verb(text):
        return f"Me dijiste: «{text}»"
    return said[:1].upper() + said[1:]


def _swapped(word: str, key: str, index: int, previous: str, spanish: bool) -> str | None:
    """The second-person word for ``word`` (``key``, folded), the ``index``-th of its memory
    after ``previous``; None: it stays."""
    if index and word[:1].isupper() and key != "i":
        return None  # a name ("Mi gata se llama Mía"), never a pronoun
    if spanish:
        at_verb = index == 0 or previous in _ES_BEFORE_VERB or previous == "me"
        if at_verb and key in ES_VERBS:
            return ES_VERBS[key]
        return ES_SWAPS.get(key)
    return EN_SWAPS.get(key)  # "you am" and "you was" are mended by the caller


def _unknown_spanish_verb(text: str) -> bool:
    """A Spanish memory opening with a first-person verb not in :data:`ES_VERBS`."""
    first = text.split()[0].casefold()
    if first in ES_VERBS or first in ES_SWAPS or first in _ES_MARKS:
        return False
    return first.endswith(("o", "é", "í")) and first not in ("no",) and len(first) > 3


def language(question: str) -> str:
    """``"es"`` or ``"en"`` for the assistant's own words: the question's; a message that
    shows neither ("Hola", "ok") gets the user's language (issue 27)."""
    if grounding.language(question) == "es" or is_spanish(question):
        return "es"
    if i18n.current() == "es" and not grounding.english_marks(question):
        return "es"
    return "en"
