# ruff: noqa: E501, W291 - the prompt texts are kept verbatim, long lines and trailing spaces included
"""The default grading prompts of promptfoo 0.121's model-graded assertions, verbatim.

Chat prompts are message lists serialized as `JSON.stringify` prints them; the rest are
text templates. Both are rendered with the assertion's variables (nunjucks syntax) before
they are sent to the grader provider. A suite may replace any of them with
`options.rubricPrompt`.
"""

from __future__ import annotations

import json


def _chat(*messages: tuple[str, str]) -> str:
    return json.dumps(
        [{"role": role, "content": content} for role, content in messages],
        ensure_ascii=False,
        separators=(",", ":"),
    )


LLM_RUBRIC = _chat(
    (
        "system",
        """You are grading output according to a user-specified rubric. If the statement in the rubric is true, then the output passes the test. You respond with a JSON object with this structure: {reason: string, pass: boolean, score: number}

Examples:

<Output>Hello world</Output>
<Rubric>Content contains a greeting</Rubric>
{"reason": "the content contains the word 'Hello'", "pass": true, "score": 1.0}

<Output>Avast ye swabs, repel the invaders!</Output>
<Rubric>Does not speak like a pirate</Rubric>
{"reason": "'avast ye' is a common pirate term", "pass": false, "score": 0.0}""",
    ),
    (
        "user",
        """<Output>
{{ output }}
</Output>
<Rubric>
{{ rubric }}
</Rubric>""",
    ),
)

FACTUALITY = _chat(
    (
        "system",
        """You are a precise factuality evaluator that compares a submitted answer to an expert answer. 

Your task is to analyze the factual content while ignoring differences in style, grammar, or punctuation.
You must categorize the submission into one of these options:

(A) The submitted answer is a subset of the expert answer and is fully consistent with it.
(B) The submitted answer is a superset of the expert answer and is fully consistent with it.
(C) The submitted answer contains all the same details as the expert answer.
(D) There is a disagreement between the submitted answer and the expert answer.
(E) The answers differ, but these differences don't matter from the perspective of factuality.

Respond ONLY with a JSON object in this format:
{
  "category": "[LETTER]",
  "reason": "[DETAILED EXPLANATION]"
}

- The "category" must be a single letter A, B, C, D, or E.
- Provide a clear, detailed explanation in the "reason" field.
- Your response must be valid JSON with no additional text.""",
    ),
    (
        "user",
        """I need you to compare these answers:

<question>
{{input}}
</question>

<expert_answer>
{{ideal}}
</expert_answer>

<submitted_answer>
{{completion}}
</submitted_answer>

Please analyze the factual relationship between these answers according to the categories you've been given.""",
    ),
)

CLOSED_QA = _chat(
    (
        "system",
        """You are assessing a submitted answer on a given task based on a criterion. Here is the data:
[BEGIN DATA]
***
[Task]: {{input}}
***
[Submission]: {{completion}}
***
[Criterion]: {{criteria}}
***
[END DATA]
Does the submission meet the criterion? First, write out in a step by step manner your reasoning about the criterion to be sure that your conclusion is correct. Avoid simply stating the correct answers at the outset. Then print only the single character "Y" or "N" (without quotes or punctuation) on its own line corresponding to the correct answer. At the end, repeat just the letter again by itself on a new line.

    Reasoning:""",
    ),
)

TRAJECTORY_GOAL_SUCCESS = _chat(
    (
        "system",
        """You are grading whether an AI agent successfully completed a goal based on its final output and a summarized execution trajectory. You respond with a JSON object with this structure: {reason: string, pass: boolean, score: number}

Judge end-to-end success, not stylistic perfection.
Use the trajectory as evidence for what the agent actually did.
Give partial credit when the agent made progress but did not fully achieve the goal.

Examples:

<Goal>Find the order status and tell the user whether it has shipped</Goal>
<Trajectory>{"stepCount":2,"steps":[{"index":1,"type":"tool","name":"search_orders"},{"index":2,"type":"message","name":"agent response"}]}</Trajectory>
<Output>Your order shipped yesterday and should arrive on Tuesday.</Output>
{"reason":"The agent used the order lookup tool and gave the user the shipping status, so the goal was achieved.","pass":true,"score":1.0}

<Goal>Find the order status and tell the user whether it has shipped</Goal>
<Trajectory>{"stepCount":1,"steps":[{"index":1,"type":"message","name":"agent response"}]}</Trajectory>
<Output>I cannot check your order right now.</Output>
{"reason":"The agent did not show evidence of checking the order and did not provide the requested status.","pass":false,"score":0.0}""",
    ),
    (
        "user",
        """<Goal>
{{ goal }}
</Goal>
<Trajectory>
{{ trajectory }}
</Trajectory>
<Output>
{{ output }}
</Output>""",
    ),
)

SELECT_BEST = _chat(
    (
        "system",
        """You are comparing multiple pieces of text to see which best fits the following criteria: {{criteria}}

Here are the pieces of text:

{% for output in outputs %}
<Text index="{{ loop.index0 }}">
{{ output }}
</Text>
{% endfor %}

Output the index of the text that best fits the criteria. You must output a single integer.""",
    ),
)

G_EVAL_STEPS = """
Given evaluation criteria that outline how you should judge a piece of text, generate 3-4 concise evaluation steps applicable to any text based on the criteria below and designed to check whether the criteria are satisfied by the text.

**EVALUATION CRITERIA**
{{criteria}}

**OUTPUT FORMAT**
IMPORTANT:
- Return output ONLY as a minified JSON object (no code fences).
- The JSON object must contain a single key, "steps", whose value is a list of strings.
- Each string must represent one evaluation step.
- Do NOT include any explanations, commentary, extra text, or additional formatting.

Format:
{"steps": <list_of_strings>}

Example:
{"steps":["<Evaluation Step 1>","<Evaluation Step 2>","<Evaluation Step 3>","<Evaluation Step 4>"]}

Here are the 3-4 concise evaluation steps, formatted as required in a minified JSON:
JSON:
"""

G_EVAL_EVALUATE = """
You will be given one Reply for a Prompt below. Your task is to rate the Reply on one metric.
Please make sure you read and understand these instructions carefully. Please keep this document open while reviewing, and refer to it as needed.

**Evaluation Criteria**
{{criteria}}

**Evaluation Steps**
- {{steps}}
Given the evaluation steps, return a JSON with two keys: 
  1) a "score" key that MUST be an integer from 0 to {{maxScore}}, where {{maxScore}} indicates that the condition described by the Evaluation Criteria is fully and clearly observed in the Reply according to the Evaluation Steps, and 0 indicates that it is not observed at all;
  2) a "reason" key, a reason for the given score, but DO NOT QUOTE THE SCORE in your reason. Please mention specific information from Prompt and Reply in your reason, but be very concise with it!

**Prompt**
{{input}}

**Reply**
{{output}}

**OUTPUT FORMAT**
IMPORTANT: 
- Return output ONLY as a minified JSON object (no code fences).
- The JSON object must contain exactly two keys: "score" and "reason".
- No additional words, explanations, or formatting are needed.
- Absolutely no additional text, explanations, line breaks, or formatting outside the JSON object are allowed.

Example JSON:
{"score":0,"reason":"The text of reply does not follow the evaluation criteria provided."}

Here is the final evaluation in the required minified JSON format:
JSON:
"""

ANSWER_RELEVANCE = """Generate question for the given answer.
Answer:
The PSLV-C56 mission is scheduled to be launched on Sunday, 30 July 2023 at 06:30 IST / 01:00 UTC. It will be launched from the Satish Dhawan Space Centre, Sriharikota, Andhra Pradesh, India
Question: When is the scheduled launch date and time for the PSLV-C56 mission, and where will it be launched from?

Answer:{{answer}}
Question:"""

CONTEXT_RECALL = """Given a context, and an answer, analyze each sentence in the answer and classify if the sentence can be attributed to the given context or not.
Think in steps and reason before coming to conclusion.

context: Albert Einstein (14 March 1879 – 18 April 1955) was a German-born theoretical physicist,widely held to be one of the greatest and most influential scientists of all time. Best known for developing the theory of relativity, he also made important contributions to quantum mechanics, and was thus a central figure in the revolutionary reshaping of the scientific understanding of nature that modern physics accomplished in the first decades of the twentieth century. His mass–energy equivalence formula E = mc2, which arises from relativity theory, has been called "the world's most famous equation". He received the 1921 Nobel Prize in Physics "for his services to theoretical physics, and especially for his discovery of the law of the photoelectric effect", a pivotal step in the development of quantum theory. His work is also known for its influence on the philosophy of science. In a 1999 poll of 130 leading physicists worldwide by the British journal Physics World, Einstein was ranked the greatest physicist of all time. His intellectual achievements and originality have made Einstein synonymous with genius.
answer: Albert Einstein born in 14 March 1879 was  German-born theoretical physicist, widely held to be one of the greatest and most influential scientists of all time. He received the 1921 Nobel Prize in Physics "for his services to theoretical physics. He published 4 papers in 1905.  Einstein moved to Switzerland in 1895
classification
1. Albert Einstein born in 14 March 1879 was  German-born theoretical physicist, widely held to be one of the greatest and most influential scientists of all time. The date of birth of Einstein is mentioned clearly in the context. So [Attributed]
2. He received the 1921 Nobel Prize in Physics "for his services to theoretical physics. The exact sentence is present in the given context. So [Attributed]
3. He published 4 papers in 1905. There is no mention about papers he wrote in given the context. So [Not Attributed]
4. Einstein moved to Switzerland in 1895. There is not supporting evidence for this in the given the context. So [Not Attributed]

context:{{context}}
answer:{{groundTruth}}
classification:
"""

CONTEXT_RELEVANCE = """Please extract relevant sentences from the provided context that is absolutely required answer the following query. If no relevant sentences are found, or if you believe the query cannot be answered from the given context, return the phrase "Insufficient Information".  While extracting candidate sentences you're not allowed to make any changes to sentences from given context.

query: {{query}}
context: {{context}}
candidate sentences:
"""

CONTEXT_FAITHFULNESS_STATEMENTS = """Given a question and answer, create one or more statements from each sentence in the given answer.
question: Who was  Albert Einstein and what is he best known for?
answer: He was a German-born theoretical physicist, widely acknowledged to be one of the greatest and most influential physicists of all time. He was best known for developing the theory of relativity, he also made important contributions to the development of the theory of quantum mechanics.
statements:
Albert Einstein was born in Germany.
Albert Einstein was best known for his theory of relativity.
question: Cadmium Chloride is slightly soluble in this chemical, it is also called what?
answer: alcohol
statements:
Cadmium Chloride is slightly soluble in alcohol.
question: Were Shahul and Jithin of the same nationality?
answer: They were from different countries.
statements:
Shahul and Jithin were from different countries.
question:{{question}}
answer: {{answer}}
statements:
"""

CONTEXT_FAITHFULNESS_VERDICTS = r"""Prompt: Natural language inference
Consider the given context and following statements, then determine whether they are supported by the information present in the context.Provide a brief explanation for each statement before arriving at the verdict (Yes/No). Provide a final verdict for each statement in order at the end in the given format. Do not deviate from the specified format.

Context:
John is a student at XYZ University. He is pursuing a degree in Computer Science. He is enrolled in several courses this semester, including Data Structures, Algorithms, and Database Management. John is a diligent student and spends a significant amount of time studying and completing assignments. He often stays late in the library to work on his projects.
statements:
1. John is majoring in Biology.
2. John is taking a course on Artificial Intelligence.
3. John is a dedicated student.
4. John has a part-time job.
5. John is interested in computer programming.

Answer:
1. John is majoring in Biology.
Explanation: John's major is explicitly mentioned as Computer Science. There is no information suggesting he is majoring in Biology.  Verdict: No.
2. John is taking a course on Artificial Intelligence.
Explanation: The context mentions the courses John is currently enrolled in, and Artificial Intelligence is not mentioned. Therefore, it cannot be deduced that John is taking a course on AI. Verdict: No.
3. John is a dedicated student.
Explanation: The prompt states that he spends a significant amount of time studying and completing assignments. Additionally, it mentions that he often stays late in the library to work on his projects, which implies dedication. Verdict: Yes.
4. John has a part-time job.
Explanation: There is no information given in the context about John having a part-time job. Therefore, it cannot be deduced that John has a part-time job.  Verdict: No.
5. John is interested in computer programming.
Explanation: The context states that John is pursuing a degree in Computer Science, which implies an interest in computer programming. Verdict: Yes.
Final verdict for each statement in order: No. No. Yes. No. Yes.
context:
{{context}}
statements:
{{statements|join("\n")}}
Answer:
"""
