"""Validate human input in a loop (seed 001): ask again until the age is a positive int.

Every ``interrupt()`` in the loop is matched by index on re-entry, so after
``"thirty"`` and ``30`` the node replays the first answer, re-asks nothing and
returns ``{"age": 30}``.
"""

from typing import TypedDict

from graphrun import END, START, Command, InMemorySaver, StateGraph, interrupt

NAME = "validation"


class FormState(TypedDict):
    age: int | None


def get_age_node(state: FormState):
    prompt = "What is your age?"

    while True:
        answer = interrupt(prompt)  # payload surfaces in result["__interrupt__"]

        if isinstance(answer, int) and answer > 0:
            return {"age": answer}

        prompt = f"'{answer}' is not a valid age. Please enter a positive number."


def build(checkpointer=None):
    builder = StateGraph(FormState)
    builder.add_node("collect_age", get_age_node)
    builder.add_edge(START, "collect_age")
    builder.add_edge("collect_age", END)
    return builder.compile(name=NAME, checkpointer=checkpointer)


graph = build()


def main() -> dict:
    app = build(InMemorySaver())
    config = {"configurable": {"thread_id": "form-1"}}
    first = app.invoke({"age": None}, config=config)
    print(first["__interrupt__"])  # -> [Interrupt(value='What is your age?', ...)]

    # Provide invalid data; the node re-prompts
    retry = app.invoke(Command(resume="thirty"), config=config)
    print(retry["__interrupt__"])  # -> [Interrupt(value="'thirty' is not a valid age...", ...)]

    # Provide valid data; loop exits and state updates
    final = app.invoke(Command(resume=30), config=config)
    print(final["age"])  # -> 30
    return final


if __name__ == "__main__":
    main()
