"""The multi-step tasks of the code mode benchmark, each written once two ways: the calls an
agent makes through `use_tool`, one turn each, with what it then works out from what it read
(`steps`), and the one script it sends instead (`script`). Both must give the same answer.

Tool names are written as toolshelf lists them (`toolbox/server/name`); `fastmcp_script` turns
a script into the same script for FastMCP's CodeMode, which names a proxied tool `server_name`.
"""

import random
import re
from pathlib import Path

NOTES = 20
WORD = "invoice"
PERSON = "Ada Lovelace"
FACTS = [
    "Born in London in 1815",
    "Travelled to Paris with her mother in 1833",
    "Wrote the first published algorithm for a machine",
    "Corresponded with Charles Babbage for years",
    "Toured the factories of the Midlands on a travel through England",
    "Studied mathematics with Augustus De Morgan",
    "Married William King in 1835",
    "Planned a travel to Italy that never happened",
    "Was interested in flying machines as a child",
    "Travelled to Scotland in 1850",
]
TOPIC = "travel"
NUMBERS = [12, 7, 31, 4, 19, 23, 8, 15, 42, 3]
CITIES = ["New York", "Chicago", "Los Angeles"]


def write_notes(folder: Path) -> None:
    """Twenty notes of 20 to 60 lines, the word on some lines of some of them (seeded)."""
    pick = random.Random(63)
    words = "meeting project budget draft review call plan client order report".split()
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(1, NOTES + 1):
        lines = []
        for _ in range(pick.randint(20, 60)):
            line = pick.sample(words, 6)
            if number % 3 == 0 and pick.random() < 0.2:
                line[pick.randrange(6)] = WORD
            lines.append(" ".join(line))
        (folder / f"note-{number:02}.md").write_text("\n".join(lines) + "\n")


def mentions(text: str) -> int:
    return sum(1 for line in text.splitlines() if WORD in line)


def read_back(texts: str) -> dict:
    """What an agent reads out of read_multiple_files' answer: `path:\\ntext` per file."""
    counts = {}
    for part in texts.split("\n---\n"):
        path, _, text = part.strip("\n").partition(":\n")
        if mentions(text):
            counts[Path(path).name] = mentions(text)
    return counts


def file_names(listing: str) -> list:
    return [line[7:] for line in listing.splitlines() if line.startswith("[FILE] ")]


async def notes_steps(call, folder: str):
    listing = await call("files/fs/list_directory", {"path": folder})
    paths = [f"{folder}/{name}" for name in file_names(listing["content"])]
    read = await call("files/fs/read_multiple_files", {"paths": paths})
    return read_back(read["content"])


NOTES_SCRIPT = """import asyncio
folder = FOLDER
listing = await call_tool("files/fs/list_directory", {"path": folder})
names = [line[7:] for line in listing["content"].splitlines() if line.startswith("[FILE] ")]
reads = await asyncio.gather(*[call_tool("files/fs/read_text_file", {"path": folder + "/" + name}) for name in names])
counts = {name: sum(1 for line in read["content"].splitlines() if "invoice" in line) for name, read in zip(names, reads)}
{name: count for name, count in counts.items() if count}
"""


async def memory_steps(call, folder: str):
    await call("memory/memory/create_entities",
               {"entities": [{"name": PERSON, "entityType": "person", "observations": []}]})
    await call("memory/memory/add_observations",
               {"observations": [{"entityName": PERSON, "contents": FACTS}]})
    found = await call("memory/memory/search_nodes", {"query": PERSON})
    return [fact for fact in found["entities"][0]["observations"] if TOPIC in fact.lower()]


MEMORY_SCRIPT = f"""person = {PERSON!r}
await call_tool("memory/memory/create_entities", {{"entities": [{{"name": person, "entityType": "person", "observations": []}}]}})
await call_tool("memory/memory/add_observations", {{"observations": [{{"entityName": person, "contents": {FACTS!r}}}]}})
found = await call_tool("memory/memory/search_nodes", {{"query": person}})
[fact for fact in found["entities"][0]["observations"] if "travel" in fact.lower()]
"""


def said_sum(text: str) -> int:
    """get-sum answers `The sum of 1 and 2 is 3.`"""
    return int(text.rstrip(".").split()[-1])


async def sum_steps(call, folder: str):
    total = NUMBERS[0]
    for number in NUMBERS[1:]:
        total = said_sum(await call("demo/everything/get-sum", {"a": total, "b": number}))
    return total


SUM_SCRIPT = f"""numbers = {NUMBERS!r}
total = numbers[0]
for number in numbers[1:]:
    said = await call_tool("demo/everything/get-sum", {{"a": total, "b": number}})
    total = int(said.rstrip(".").split()[-1])
total
"""


async def weather_steps(call, folder: str):
    reports = {city: await call("demo/everything/get-structured-content", {"location": city})
               for city in CITIES}
    warmest = max(reports, key=lambda city: reports[city]["temperature"])
    return {"city": warmest, "temperature": reports[warmest]["temperature"]}


WEATHER_SCRIPT = f"""import asyncio
cities = {CITIES!r}
reports = await asyncio.gather(*[call_tool("demo/everything/get-structured-content", {{"location": city}}) for city in cities])
warmest = max(range(len(cities)), key=lambda at: reports[at]["temperature"])
{{"city": cities[warmest], "temperature": reports[warmest]["temperature"]}}
"""


async def filed_steps(call, folder: str):
    counts = await notes_steps(call, folder)
    entities = [{"name": name, "entityType": "note", "observations": [f"{count} lines mention {WORD}"]}
                for name, count in counts.items()]
    await call("memory/memory/create_entities", {"entities": entities})
    found = await call("memory/memory/search_nodes", {"query": WORD})
    return sorted(entity["name"] for entity in found["entities"])


FILED_SCRIPT = NOTES_SCRIPT.rsplit("\n", 2)[0] + """
entities = [{"name": name, "entityType": "note", "observations": [str(count) + " lines mention invoice"]} for name, count in counts.items() if count]
await call_tool("memory/memory/create_entities", {"entities": entities})
found = await call_tool("memory/memory/search_nodes", {"query": "invoice"})
sorted(entity["name"] for entity in found["entities"])
"""

TASKS = [
    {"name": "notes", "ask": f"Which of the {NOTES} notes mention '{WORD}', and on how many lines each?",
     "steps": notes_steps, "script": NOTES_SCRIPT},
    {"name": "memory", "ask": f"Record 10 facts about {PERSON}, then read back those about {TOPIC}.",
     "steps": memory_steps, "script": MEMORY_SCRIPT},
    {"name": "sums", "ask": f"Add up {len(NUMBERS)} numbers with the reference server's sum tool.",
     "steps": sum_steps, "script": SUM_SCRIPT},
    {"name": "weather", "ask": f"Which of {len(CITIES)} cities is warmest, and how warm?",
     "steps": weather_steps, "script": WEATHER_SCRIPT},
    {"name": "filed", "ask": f"File each note that mentions '{WORD}' in memory with its count, then list them.",
     "steps": filed_steps, "script": FILED_SCRIPT},
]


def script_for(task: dict, folder: str) -> str:
    return task["script"].replace("FOLDER", repr(folder))


def fastmcp_script(script: str) -> str:
    """The same script for FastMCP's CodeMode: `"toolbox/server/name"` becomes `"server_name"`."""
    return re.sub(r'"[\w-]+/([\w-]+)/([\w-]+)"', r'"\1_\2"', script)
