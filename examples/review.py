"""Review and edit (seed 001): a human rewrites generated text before it is kept."""

from typing import TypedDict

from graphrun import END, START, Command, InMemorySaver, StateGraph, interrupt

NAME = "review"


class ReviewState(TypedDict):
    generated_text: str


def review_node(state: ReviewState):
    # Ask a reviewer to edit the generated content
    updated = interrupt({
        "instruction": "Review and edit this content",
        "content": state["generated_text"],
    })
    return {"generated_text": updated}


def build(checkpointer=None):
    builder = StateGraph(ReviewState)
    builder.add_node("review", review_node)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    return builder.compile(name=NAME, checkpointer=checkpointer)


graph = build()


def main() -> dict:
    app = build(InMemorySaver())
    config = {"configurable": {"thread_id": "review-42"}}
    initial = app.invoke({"generated_text": "Initial draft"}, config=config)
    print(initial["__interrupt__"])  # -> [Interrupt(value={'instruction': ..., 'content': ...})]

    # Resume with the edited text from the reviewer
    final_state = app.invoke(
        Command(resume="Improved draft after review"),
        config=config,
    )
    print(final_state["generated_text"])  # -> "Improved draft after review"
    return final_state


if __name__ == "__main__":
    main()
