"""What the course package says to a student, in English: key -> text with {name} placeholders.

ko.py has the same keys and the same placeholders; ``hookviz.course.wording`` reads both. The
marks ✓ ✗ ○ and the sentinel line are not here: conventions.py owns them.
"""

from ..conventions import Outcome, Status

WORDS: dict[str, str] = {
    # -- label: the prefixes of a check's lines; the card parses its lines by them, in every language
    "label.why": "Why:",
    "label.hint": "Hint:",
    "label.more": "More:",
    "label.code": "Code:",
    "label.stuck": "Stuck?",
    "label.as_above": "as above.",
    # -- card: the card's own words (HTML)
    "card.lang": "en",
    "card.hint": "Hint",
    "card.more": "More",
    "card.code": "Code",
    "card.results": "check results",
    "card.passed": "passed",
    "card.failed": "failed",
    "card.todo": "not done yet",
    "card.note": "note",
    # -- checks
    "checks.not_done_yet": "not done yet",
    "checks.not_done": "{function}: not done yet. {advice}",
    "checks.todo_advice": "Write your answer where it says YOUR CODE HERE, run that cell, then run this check again.",
    "checks.stuck": 'checks.hint("{answer}") shows code, as does the 3rd failed run of this check.',
    "checks.no_failure_yet": "No check has failed yet in this kernel. Ask for one: checks.hint('print_module').",
    "checks.no_hints": "No hints for {name}.",
    "checks.no_hints_known": "No hints for {name}; this assignment has hints for {known}.",
    "checks.hints_failed": "Hints for {name}, all levels (the checks that failed):",
    "checks.hints_every": "Hints for {name}, all levels (every check):",
    "checks.setup_not_run": 'The setup cell has not run in this kernel (a new kernel, or one just restarted). Run the setup cell near the top, the one ending with checks.assignment("{name}"), then the cells below it down to this one, then this check again.',
    "checks.needs_one": "{names} is not defined in this kernel yet: run the cells above this one from the top (the setup cell first, then the cells that define it), then this check again.",
    "checks.needs_many": "{names} are not defined in this kernel yet: run the cells above this one from the top (the setup cell first, then the cells that define them), then this check again.",
    "checks.not_defined": "{name} is not defined yet: run the cell where you write it, then run this again.",
    "checks.not_defined_cell": "{name} is not defined yet: run the cell where you write it, then run this cell again.",
    "checks.not_defined_check": "{name} is not defined yet: run the cell where you write it, then run this check again.",
    "checks.not_a_function": "{name} should be a function, but it is {value}.",
    "checks.define_it": "define it with `def {name}(...):` and run that cell again.",
    "checks.raised": "{function} raised {error}",
    "checks.it_raised": "it raised {error}",
    "checks.did_not_raise": "it did not raise (expected {error})",
    "checks.is_type": "it is {value}, expected {expected}",
    "checks.defined_close": "This check looks for a function named {name}; the notebook defines {close}, a close name. If you renamed it, give it back the name {name}.",
    "checks.defined_other": "This check looks for a function named {name}; the notebook defines {mine}, and none of them is {name}.",
    "checks.no_message": "(no message)",
    "checks.your_answer": "your answer",
    "checks.claim_no_hooks_left": "no hook is left on the model",
    "checks.claim_trainable": "every parameter still trains: it requires grad, and an optimizer step changes it",
    "checks.claim_written_once": "each parameter is written exactly once",
    "checks.claim_no_data": "autograd saw every change (no .data)",
    # -- upstream: a note when a correct earlier answer stands in for the student's (its check's end)
    "upstream.failed": "checked with a correct {name}, since yours has a ✗ above",
    "upstream.hidden": "checked with a correct {name}, since yours fails a hidden test of its check",
    "upstream.not_done": "checked with a correct {name}, since yours is not done yet",
    # -- values
    "values.and": " and ",
    "values.list_sep": ", ",
    "values.root": "the root",
    "values.root_key": "'' (the root module's path)",
    "values.the_result": "the result",
    "values.item": "item",
    "values.value": "value",
    "values.a_name": "a {name}",
    "values.an_name": "an {name}",
    "values.of_shape": "{kind} of shape {shape}",
    "values.of_items": "{kind} of {count} items",
    "values.tensor_stats": "a tensor with mean {mean} and max {max}",
    "values.is_expected": "{label} is {actual}, expected {expected}",
    "values.has_items": "{label} has {actual} items, expected {expected}",
    "values.has_keys": "{label} has {parts}",
    "values.missing_keys": "missing keys {keys}",
    "values.unexpected_keys": "unexpected keys {keys}",
    "values.has_shape": "{label} has shape {actual}, expected {expected}",
    "values.has_dtype": "{label} has dtype {actual}, expected {expected}",
    "values.is_on": "{label} is on {actual}, expected {expected}",
    "values.line_is": "line {number} of {label} is {actual}, expected {expected}",
    "values.has_lines": "{label} has {actual} lines, expected {expected}",
    "values.whitespace": "{label} differs from the expected text in its whitespace",
    "values.missing": "missing {names}",
    "values.unexpected": "unexpected {names}",
    # -- inspect
    "inspect.root": "the root ({root})",
    "inspect.frozen_one": "{names} has requires_grad=False: no optimizer changes it",
    "inspect.frozen_many": "{names} have requires_grad=False: no optimizer changes them",
    "inspect.step_raised": "an optimizer step on the parameters raised {error}",
    "inspect.stuck": "one optimizer step left {names} unchanged",
    "inspect.other_kind_one": "{count} hook is of another kind ({kinds}), on {where}",
    "inspect.other_kind_many": "{count} hooks are of another kind ({kinds}), on {where}",
    "inspect.outputs_replaced": "a hook returned a new output for {where}, and the model computed on with it instead of what forward made",
    "inspect.extra": "forward hooks on {where} too",
    "inspect.missing": "no forward hook on {where}",
    "inspect.twice_one": "{where} has more than one",
    "inspect.twice_many": "{where} have more than one",
    "inspect.written_many": "{name} was written {count} times, at {where}",
    "inspect.more_written": " (and {count} more parameters more than once)",
    "inspect.never_one": "{names} was never written",
    "inspect.never_many": "{names} were never written",
    "inspect.through_data": "{names} changed through .data, where autograd cannot see it",
    "inspect.replaced_one": "{names} is a new Parameter object",
    "inspect.replaced_many": "{names} are new Parameter objects",
    "inspect.hooks_left_one": "{count} hook is left: {shown}",
    "inspect.hooks_left_many": "{count} hooks are left: {shown}",
    "inspect.global_hook": "a global {kind} hook {name} (on every module)",
    "inspect.hook_on": "{kind} hook {name} on {where}",
    "inspect.and_more": ", and {count} more",
    "inspect.path_back": "autograd's graph leads from it back to {names}: a backward pass from it puts gradients there",
    # -- kind: a hook's kind as a ✗ line names it (hookviz.hook_kinds owns the kinds)
    "kind.forward_pre": "forward_pre",
    "kind.forward": "forward",
    "kind.backward_pre": "backward_pre",
    "kind.backward": "backward",
    "kind.tensor": "tensor",
    "kind_words.forward_pre": "forward pre",
    "kind_words.forward": "forward",
    "kind_words.backward_pre": "backward pre",
    "kind_words.backward": "backward",
    "kind_words.tensor": "tensor",
    # -- diagnosis
    "diagnosis.called_at_registration": "it called {hook}(...) inside register_*_hook(...), so the hook ran once, there, with the arguments written in that call",
    "diagnosis.plain_tensor": "it assigned a plain tensor to {name}, which the module holds as a Parameter",
    "diagnosis.hook_returned": "the model was called with a tensor, but a layer inside it received a {kind}: a forward hook's return value replaced a module's output",
    "diagnosis.backward_returned": "a backward hook returned something that cannot replace the gradient it was given",
    "diagnosis.needs_matrix": "a matrix product that needs 2-D matrices got a 1-D tensor",
    "diagnosis.tuple_index_one": "{tuple}[{index}] does not exist: this {tuple} holds fewer than {count} item",
    "diagnosis.tuple_index_many": "{tuple}[{index}] does not exist: this {tuple} holds fewer than {count} items",
    "diagnosis.no_attribute": "{module} has no attribute {attribute}: apply calls your function on every module, not only on those that have it",
    "diagnosis.late_binding": "a hook looked up {key}, the last value of a loop variable it read after the loop ended",
    "diagnosis.leaf_in_place": "it changed a parameter in place while autograd was recording",
    "diagnosis.grad_input_none": "grad_input[0] is None in the first layer's hook: its input needs no gradient",
    "diagnosis.grad_none": "a .grad was None when the code read it",
    "diagnosis.hook_signature": "PyTorch called a hook with arguments it does not take",
    "diagnosis.hook_is_none": "PyTorch tried to call a hook that is None",
    "diagnosis.integer_parameter": "an integer tensor was asked to require grad (a Parameter does)",
    "diagnosis.two_dtypes": "a matrix product got tensors of two dtypes",
    "diagnosis.shapes": "a matrix product had shapes that do not fit",
    "diagnosis.full_hook_in_place": "an in-place op modified the output of a module that has a full backward hook",
    "diagnosis.tuple_inputs": "an arithmetic operation got the whole tuple of inputs",
    "diagnosis.copy_shape": "copy_ got a source whose shape does not fit the parameter",
    "diagnosis.no_grad_tensor": "it registered a tensor hook on a tensor that does not require grad",
    "diagnosis.with_one": "the with block called {owner}.{method} with {given} argument (self included), and it takes {takes}",
    "diagnosis.with_many": "the with block called {owner}.{method} with {given} arguments (self included), and it takes {takes}",
    "diagnosis.method_one": "{owner}.{method} was called with {given} argument (self included), and its def takes {takes}",
    "diagnosis.method_many": "{owner}.{method} was called with {given} arguments (self included), and its def takes {takes}",
    # The hints of the diagnosed mistakes (diagnose.py): a nudge, and a sharper one (more).
    # -- hint.leaf_in_place
    "hint.leaf_in_place.nudge": "Autograd tracks every parameter, and refuses an in-place change to one while it is recording. Switch recording off around the change: read about torch.no_grad() in the torch docs (or use an nn.init function, which does it for you).",
    "hint.leaf_in_place.more": "Put the loop that changes the parameters inside a `with torch.no_grad():` block; do not reach for .data, which hides the change from autograd instead.",
    # -- hint.grad_input_is_none
    "hint.grad_input_is_none.nudge": "grad_input holds the gradients with respect to the module's inputs, and an input that needs no gradient gets None: the first layer's input x does not require grad. The gradient with respect to the layer's output is the other argument, grad_output. See Module.register_full_backward_hook in the torch docs.",
    "hint.grad_input_is_none.more": "Use grad_output[0], which is never None for a layer whose output reaches the loss.",
    # -- hint.grad_is_none
    "hint.grad_is_none.nudge": "A tensor's .grad stays None until backward has reached it, and for a tensor that is not a leaf (an activation) unless retain_grad() was called on it before backward. Read the gradient where it arrives instead (in a hook, from its gradient argument), or call retain_grad() on that tensor during the forward pass.",
    # -- hint.hook_signature
    "hint.hook_signature.nudge": "PyTorch calls each kind of hook with its own arguments: a forward pre-hook as hook(module, inputs), a forward hook as hook(module, inputs, output), a full backward hook as hook(module, grad_input, grad_output), a tensor hook as hook(grad). Check that the function you registered takes the arguments of the kind you registered it as.",
    # -- hint.not_a_function
    "hint.not_a_function.nudge": "register_*_hook needs the function itself. Writing hook(...) inside the call runs the function once and registers what it returned (often None).",
    # -- hint.weight_layout
    "hint.weight_layout.nudge": "W is stored like nn.Linear's weight, (out_features, in_features), so a batch x of shape (n, in_features) is multiplied by W transposed. See torch.nn.Linear in the torch docs.",
    # -- hint.full_hook_in_place
    "hint.full_hook_in_place.nudge": "A full backward hook wraps the module's output, and a later in-place op (such as ReLU(inplace=True)) may not modify that wrapped output. A tensor hook on the output (registered from a forward hook) sees the same gradient and survives in-place ops.",
    # -- hint.tuple_inputs
    "hint.tuple_inputs.nudge": "inputs is the tuple of positional arguments the module was called with, even when there is only one: the input tensor is its first item.",
    # -- hint.copy_shape
    "hint.copy_shape.nudge": "copy_ needs a source that broadcasts to the parameter's shape. A tensor of a fixed shape fits one model only: build the source from the parameter itself, or use fill_, which needs no shape at all.",
    # -- hint.no_grad_tensor
    "hint.no_grad_tensor.nudge": "A tensor hook fires when autograd computes that tensor's gradient, so it can only be registered on a tensor that requires grad.",
    # -- hint.integer_parameter
    "hint.integer_parameter.nudge": "A Parameter must hold floating-point values to require grad, and this one got integers: torch.arange of ints, torch.tensor of Python ints or a LongTensor is int64. Make the tensor floating point (torch.rand and torch.zeros are; or pass dtype=, e.g. the dtype of the module's other parameters) before you wrap it in nn.Parameter.",
    # -- hint.dtype_mismatch
    "hint.dtype_mismatch.nudge": "Two tensors of different dtypes met in a matrix product: usually a float64 tensor (made by numpy, or by torch.tensor from a numpy array or with dtype=torch.float64) next to the model's float32 ones. Make every parameter with torch's default dtype, or give it the dtype of the tensors it works with (tensor.to(other.dtype)).",
    # -- hint.late_binding
    "hint.late_binding.nudge": "A function defined in a loop reads the loop's variables when it runs, not when it was defined: by then the loop has ended, and every such function sees the last value. Freeze the value when you define the function (a default argument does that).",
    "hint.late_binding.more": "A default argument is evaluated once, when the def statement runs.",
    # -- hint.plain_tensor_as_parameter
    "hint.plain_tensor_as_parameter.nudge": "Once a module holds an nn.Parameter under a name, nn.Module only lets a Parameter (or None) be assigned to that name: a plain tensor there would drop out of parameters() and every optimizer. To change the values, change the existing parameter in place with autograd switched off (torch.no_grad); to make a new parameter, wrap the tensor in nn.Parameter.",
    # -- hint.forward_hook_returned
    "hint.forward_hook_returned.nudge": "What a forward hook returns replaces the module's output, so the next layer receives it. A hook that only records what it sees must return nothing (None): a hook that returns the list or dict it fills hands that container on instead of the tensor. See Module.register_forward_hook in the torch docs.",
    "hint.forward_hook_returned.more": "End the hook after it stores the output, with no return statement, or return None.",
    # -- hint.backward_hook_returned
    "hint.backward_hook_returned.nudge": "What a backward hook returns replaces a gradient: a full backward hook's return value replaces grad_input (one gradient per input of the module, each of the input's shape), a tensor hook's replaces the gradient it received. A hook that only records must return nothing (None); one that changes the gradient must return a tensor of the same shape.",
    # -- hint.needs_a_matrix
    "hint.needs_a_matrix.nudge": "torch.mm and torch.addmm take 2-D matrices only, and a single sample of shape (features,) is 1-D. The @ operator (torch.matmul) works on 1-D and 2-D inputs alike, the way nn.Linear does.",
    # -- hint.hook_tuple_index
    "hint.hook_tuple_index.nudge": "inputs and grad_input hold one item per positional argument of the module's forward, and grad_output one per output: for an nn.Linear each holds one item, at index 0. See Module.register_full_backward_hook and register_forward_hook in the torch docs.",
    # -- hint.context_manager_signature
    "hint.context_manager_signature.nudge": "A with block calls __enter__(self) when it starts and __exit__(self, exc_type, exc_value, traceback) when it ends: three arguments after self, all None when the block ended normally. Define them to take exactly these (def __exit__(self, *exc) takes any).",
    # -- hint.method_signature
    "hint.method_signature.nudge": "Python passes the object itself as a method's first argument (self), then the arguments of the call. Check that the method's def lists self first, then what its callers pass.",
    # -- hint.module_lacks_attribute
    "hint.module_lacks_attribute.nudge": "apply calls your function on every module of the model, the containers included (a Layer, the Model, a Sequential), and only some modules have that attribute. Test the module's type first (isinstance, or a helper such as is_function) and leave the others alone.",
    # -- hint.hooks_left
    "hint.hooks_left.nudge": "A hook stays on its module until its handle's remove() is called, and keeps firing on every later call. Keep the handle that register_*_hook returns, and remove it when the job is done, also when the job raises (see torch.utils.hooks.RemovableHandle).",
    "hint.hooks_left.more": "Register, then run the model inside try:, and remove every handle in finally: (or use the handle as a context manager: `with module.register_forward_hook(...):`).",
    # -- hint.recursive_parameters
    "hint.recursive_parameters.nudge": "module.parameters() yields the module's own parameters and those of every submodule. apply already calls your function on every module, so each parameter is reached again at each of its ancestors. Look at the recurse argument of Module.parameters in the torch docs.",
    "hint.recursive_parameters.more": "Ask each module only for the parameters it owns itself.",
    # -- hint.through_data
    "hint.through_data.nudge": "param.data is the parameter's storage with autograd's bookkeeping stripped off: a change made through it is invisible to autograd, so a backward pass can silently use a stale value. Change the parameter itself, with autograd switched off (torch.no_grad).",
    # -- hint.new_parameter_objects
    "hint.new_parameter_objects.nudge": "Assigning a new nn.Parameter replaces the object an optimizer already holds, so the optimizer goes on training the old one. Change the values of the existing parameter in place (methods ending in _ such as fill_ or copy_).",
    # -- hint.gradient_changed_in_place
    "hint.gradient_changed_in_place.nudge": "A tensor hook must not modify the gradient it receives: the same gradient tensor can also flow to other tensors (x + y hands one gradient object to both x and y), and they would be changed too. Return a new tensor instead; see Tensor.register_hook in the torch docs.",
    "hint.gradient_changed_in_place.more": "Build the result with an out-of-place operation (grad * factor, not grad.mul_(factor)) and return it: what a tensor hook returns replaces the gradient.",
    # -- hint.global_hooks_left
    "hint.global_hooks_left.nudge": "torch.nn.modules.module.register_module_forward_hook (and its backward and pre-hook siblings) registers a global hook: it fires for every module of every model in the kernel until its handle's remove() is called. Keep that handle too, and remove it when the job is done, also when the job raises.",
    "hint.global_hooks_left.more": "A global hook is no different from one on a module here: keep the handle it returns and call remove() in finally: (or in __exit__). The check removed the ones it found, so they do not fire in the rest of this notebook.",
    # -- hint.frozen_parameters
    "hint.frozen_parameters.nudge": "A parameter with requires_grad=False gets no gradient, so an optimizer never changes it: the model stops learning it. Switching autograd off for a change is torch.no_grad()'s job, which leaves the parameter trainable; requires_grad=False (or requires_grad_(False)) freezes it for good. See torch.no_grad and Tensor.requires_grad_ in the torch docs.",
    "hint.frozen_parameters.more": "Create parameters with the default requires_grad=True, and make in-place changes inside `with torch.no_grad():` instead of turning requires_grad off.",
    # -- hint.unregistered_parameter
    "hint.unregistered_parameter.nudge": "A module registers a Parameter when it is assigned as an attribute (module.name = nn.Parameter(...)), through nn.Module.__setattr__. Writing into module.__dict__, or object.__setattr__, skips that step: the attribute is there, but parameters(), state_dict() and every optimizer miss it.",
    # -- hint.gradient_changed_through_data
    "hint.gradient_changed_through_data.nudge": "Changing grad.data in place changes the gradient tensor itself: .data is the same storage, with autograd's bookkeeping (and its version counter) stripped off, so the change is silent. The same gradient tensor can also flow to other tensors (x + y hands one gradient object to both x and y), and they would be changed too. Return a new tensor instead; see Tensor.register_hook in the torch docs.",
    "hint.gradient_changed_through_data.more": "Build the result with an out-of-place operation on grad itself (grad * factor, not grad.data.mul_(factor)) and return it: what a tensor hook returns replaces the gradient.",
    # -- hint.parameters_missed
    "hint.parameters_missed.nudge": "apply calls your function once on every module; each call should handle the parameters that module owns. Look at which modules own the parameters that were missed.",
    # -- hint.wrong_hook_kind
    "hint.wrong_hook_kind.nudge": "A forward pre-hook runs before forward and sees only the inputs; a forward hook runs after forward, sees the output, and what it returns replaces the output. See Module.register_forward_hook and register_forward_pre_hook in the torch docs.",
    # -- feedback: the student's feedback file and Gradescope's results (grading/core/feedback.py)
    "feedback.title": "{assignment}: feedback for {student}",
    "feedback.score": "Score: {points} / {max_points}",
    "feedback.status": "Status: {status}",
    "feedback.notes": "Notes",
    "feedback.passed": "passed",
    "feedback.not_passed": "not passed",
    "feedback.passed_sentence": "Passed.",
    "feedback.not_passed_sentence": "Not passed.",
    "feedback.what_happened": "What happened: {what}: {why}.",
    "feedback.what_happened_only": "What happened: {what}.",
    "feedback.partial_credit": "Partial credit: {why}.",
    "feedback.looks_for": "What the check looks for:",
    "feedback.your_output": "Your output:",
    "feedback.nothing": "(nothing)",
    "feedback.hidden_model": "Your answer passed the checks you could run, but a hidden test failed: the grader ran one of this cell's checks again, on a model you had not seen, and your answer did not pass it ({hidden}). An answer that works for any model passes; look for what yours assumes about the models the visible checks use (a size, a name, a number of layers).",
    "feedback.hidden_input": "Your answer passed the checks you could run, but a hidden test failed: the grader tried your answer on a case you had not seen, and it did not pass ({hidden}). An answer that works for any input passes; look for what yours assumes about the inputs the visible checks use.",
    "feedback.hints": "Hints:",
    "feedback.locked_name_restored": "Your answer cells define {name} again, which the locked cell {cell} defines; the checks from {check} on ran with the locked cell's {name}, as they were written for it. Give yours another name.",
    "feedback.not_written": "An answer this check needs is not written yet: write it where it says YOUR CODE HERE.",
    "feedback.by_hand": "Your instructor grades this answer by hand; the points come later.",
    "feedback.comment": "Comment: {comment}",
    "feedback.hidden_later": "The checks with hidden tests ({names}) are shown {when}.",
    "feedback.when.after_due_date": "after the due date",
    "feedback.when.after_published": "when your instructor publishes the grades",
    "feedback.when.hidden": "to your instructor only",
    "feedback.advice.mismatch": "Compare your output with what the check looks for, above.",
    "feedback.advice.error": "The check stopped with an error (shown above); your answer raised it or made the check fail.",
    "feedback.advice.timeout": "This check ran out of time: look for a loop that never ends, or work that is far too slow.",
    "feedback.advice.kernel-died": "Python stopped while this check ran (os._exit, a crash, or too much memory).",
    "feedback.advice.not-run": "This check did not run, because of what happened earlier in the notebook.",
    "feedback.advice.tampered": "The grader's tools were changed while this check ran; the check counts for nothing.",
    "feedback.advice.grader-error": "The grader could not run this check; ask your instructor.",
    "feedback.advice.skipped": "This check was skipped.",
    # -- outcome: a check's outcome (or a submission's status) in words; conventions.py owns the English
    # a status that shares an outcome's name (error, timeout) reads as the outcome, as in_words does
    **{f"outcome.{kind.value}": kind.words for kind in (*Status, *Outcome)},
    # -- merge: what the grader tells a student about their notebook (grading/core/merge.py)
    "merge.renamed": "Your answer {grade_id} was graded as written; the checks look for {missing}, which your answer cell {grade_id} does not define (it defines {defined}): name it {missing}.",
    "merge.renamed_detail": "the checks look for {missing}, which your answer cell {grade_id} does not define (it defines {defined}): name it {missing}",
    "merge.answer_duplicated": "Your notebook has {count} answer cells for {grade_id}; the last one was graded.",
    "merge.found_by_functions": "The answer cell {grade_id} had lost its metadata; the cell that defines {functions} was graded.",
    "merge.found_by_position": "Warning: no cell carried the answer {grade_id}; your code cell {number} was graded as that answer, by its position.",
    "merge.answer_missing": "No answer for {grade_id} was found; it was graded as not done.",
    "merge.check_missing": "The check cell {grade_id} was missing from your notebook; the original was used.",
    "merge.check_duplicated": "The check cell {grade_id} appears {count} times; the original was used once.",
    "merge.check_outdated": "Your copy of the check cell {grade_id} is an older version (the assignment changed after you got it); the current one was used.",
    "merge.check_edited": "You edited the check cell {grade_id}; the original was used.",
    "merge.points_changed": "The points of {grade_id} were changed to {claimed} in your notebook; it is worth {points}.",
    "merge.checks_reordered": "Your check cells were in another order; the original order was used.",
    # -- stamp: the comments of the cells `hookviz build` stamps and writes (format/notebooks.py,
    # format/steps.py); the grader knows a stamped cell by its first line in every language
    "stamp.install": "Installs hookviz when it is missing (on Colab, say); silent when it is already installed.",
    "stamp.content": "This notebook's hints and predictions, packed by `hookviz build`: run it, nothing to read.",
    "steps.guard_note": "a fresh kernel gets a note, not a NameError",
    # -- spec: the heading of a check cell's specification in the student's copy (format/steps.py)
    "spec.what": "What it checks:",
    "spec.on": "What it checks, on {models}:",
    # -- hint.rerun: the hint under an error no diagnosis recognises
    "hint.rerun.nudge": "Fix your answer, run its cell, then run this check again.",
}
