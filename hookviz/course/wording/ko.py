"""What the course package says to a student, in Korean (합니다체): the keys and placeholders of en.py.

A placeholder never sits right before a particle its pronunciation decides (을/를, 이/가, 은/는,
와/과, (으)로): the sentence is written so that it needs none. Words from
translations/ko/glossary.toml: 변화도, 매개변수, Tensor, 순전파 훅, 역전파 훅, 핸들, 메소드.
"""

WORDS: dict[str, str] = {
    # -- label: the prefixes of a check's lines; the card parses its lines by them, in every language
    "label.why": "이유:",
    "label.hint": "힌트:",
    "label.more": "추가 힌트:",
    "label.code": "코드:",
    "label.stuck": "막혔나요?",
    "label.as_above": "위와 같습니다.",
    # -- card: the card's own words (HTML)
    "card.lang": "ko",
    "card.hint": "힌트",
    "card.more": "추가 힌트",
    "card.code": "코드",
    "card.results": "검사 결과",
    "card.passed": "통과",
    "card.failed": "실패",
    "card.todo": "아직 하지 않음",
    # -- checks
    "checks.not_done_yet": "아직 작성하지 않았습니다",
    "checks.not_done": "{function}: 아직 작성하지 않았습니다. {advice}",
    "checks.todo_advice": "YOUR CODE HERE 자리에 답을 작성하고 그 셀을 실행한 다음, 이 검사를 다시 실행하세요.",
    "checks.stuck": 'checks.hint("{answer}") 호출로 코드를 볼 수 있습니다. 이 검사가 세 번째로 실패할 때도 코드가 나옵니다.',
    "checks.no_failure_yet": "이 커널에서는 아직 실패한 검사가 없습니다. 함수 이름을 넣어 요청할 수 있습니다: checks.hint('print_module').",
    "checks.no_hints": "{name}에 대한 힌트가 없습니다.",
    "checks.no_hints_known": "{name}에 대한 힌트가 없습니다. 이 과제에는 다음 함수의 힌트가 있습니다: {known}.",
    "checks.hints_failed": "{name} 함수의 힌트, 모든 단계(실패한 검사):",
    "checks.hints_every": "{name} 함수의 힌트, 모든 단계(모든 검사):",
    "checks.setup_not_run": '이 커널에서 설정 셀이 아직 실행되지 않았습니다(새 커널이거나 방금 재시작한 커널입니다). 위쪽에서 checks.assignment("{name}") 호출로 끝나는 설정 셀을 실행하고, 그 아래 셀부터 이 셀 바로 위까지 차례로 실행한 다음, 이 검사를 다시 실행하세요.',
    "checks.needs_one": "{names}: 이 커널에서 아직 정의되지 않았습니다. 이 셀 위의 셀들을 맨 위부터 실행하고(설정 셀을 먼저, 그다음 이 이름을 정의하는 셀을), 이 검사를 다시 실행하세요.",
    "checks.needs_many": "{names}: 이 커널에서 아직 정의되지 않았습니다. 이 셀 위의 셀들을 맨 위부터 실행하고(설정 셀을 먼저, 그다음 이 이름들을 정의하는 셀을), 이 검사를 다시 실행하세요.",
    "checks.not_defined": "{name}: 아직 정의되지 않았습니다. 이 함수를 작성하는 셀을 실행한 다음, 이것을 다시 실행하세요.",
    "checks.not_defined_cell": "{name}: 아직 정의되지 않았습니다. 이 이름을 정의하는 셀을 실행한 다음, 이 셀을 다시 실행하세요.",
    "checks.not_defined_check": "{name}: 아직 정의되지 않았습니다. 이 함수를 작성하는 셀을 실행한 다음, 이 검사를 다시 실행하세요.",
    "checks.not_a_function": "{name}: 함수여야 하는데, 지금 값은 {value}입니다.",
    "checks.define_it": "`def {name}(...):` 형태로 함수를 정의하고 그 셀을 다시 실행하세요.",
    "checks.raised": "{function} 함수에서 오류가 발생했습니다: {error}",
    "checks.it_raised": "오류가 발생했습니다: {error}",
    "checks.did_not_raise": "오류가 발생하지 않았습니다(기대한 오류: {error})",
    "checks.is_type": "값의 종류가 다릅니다: {value}, 기대한 종류: {expected}",
    "checks.defined_close": "이 검사는 이름이 {name}인 함수를 찾습니다. 노트북에 정의된 함수 가운데 이름이 비슷한 것: {close}. 이름을 바꿨다면 원래 이름으로 되돌리세요: {name}.",
    "checks.defined_other": "이 검사는 이름이 {name}인 함수를 찾습니다. 노트북에 정의된 함수와 클래스: {mine}. 그중에 {name} 함수는 없습니다.",
    "checks.no_message": "(메시지 없음)",
    "checks.your_answer": "여러분의 답",
    "checks.claim_no_hooks_left": "모델에 남은 훅이 없습니다",
    "checks.claim_trainable": "모든 매개변수가 여전히 학습됩니다: requires_grad가 켜져 있고, 옵티마이저 한 단계가 값을 바꿉니다",
    "checks.claim_written_once": "각 매개변수에 정확히 한 번씩 값을 씁니다",
    "checks.claim_no_data": "Autograd가 모든 변경을 보았습니다(.data 사용 없음)",
    # -- values
    "values.and": ", ",
    "values.list_sep": ", ",
    "values.root": "루트 모듈",
    "values.root_key": "'' (루트 모듈의 경로)",
    "values.the_result": "결과",
    "values.item": "항목",
    "values.value": "값",
    "values.a_name": "{name}",
    "values.an_name": "{name}",
    "values.of_shape": "모양이 {shape}인 {kind}",
    "values.of_items": "항목이 {count}개인 {kind}",
    "values.tensor_stats": "평균 {mean}, 최댓값 {max}인 Tensor",
    "values.is_expected": "{label}의 값: {actual}, 기대한 값: {expected}",
    "values.has_items": "{label}의 항목 수: {actual}개, 기대한 수: {expected}개",
    "values.has_keys": "{label}: {parts}",
    "values.missing_keys": "빠진 키 {keys}",
    "values.unexpected_keys": "예상하지 않은 키 {keys}",
    "values.has_shape": "{label}의 모양: {actual}, 기대한 모양: {expected}",
    "values.has_dtype": "{label}의 dtype: {actual}, 기대한 dtype: {expected}",
    "values.is_on": "{label}의 장치: {actual}, 기대한 장치: {expected}",
    "values.line_is": "{label}의 {number}번째 줄: {actual}, 기대한 줄: {expected}",
    "values.has_lines": "{label}의 줄 수: {actual}, 기대한 줄 수: {expected}",
    "values.whitespace": "{label}의 공백이 기대한 텍스트와 다릅니다",
    "values.missing": "빠진 것: {names}",
    "values.unexpected": "예상하지 않은 것: {names}",
    # -- inspect
    "inspect.root": "루트({root})",
    "inspect.frozen_one": "{names}: requires_grad=False 상태라서 어떤 옵티마이저도 이 매개변수를 바꾸지 않습니다",
    "inspect.frozen_many": "{names}: requires_grad=False 상태라서 어떤 옵티마이저도 이 매개변수들을 바꾸지 않습니다",
    "inspect.step_raised": "매개변수에 옵티마이저 한 단계를 적용하자 오류가 발생했습니다: {error}",
    "inspect.stuck": "옵티마이저 한 단계 뒤에도 바뀌지 않은 매개변수: {names}",
    "inspect.other_kind_one": "다른 종류의 훅 {count}개({kinds}), 위치: {where}",
    "inspect.other_kind_many": "다른 종류의 훅 {count}개({kinds}), 위치: {where}",
    "inspect.extra": "다른 곳에도 순전파 훅이 있습니다: {where}",
    "inspect.missing": "순전파 훅이 없는 곳: {where}",
    "inspect.twice_one": "훅이 두 개 이상 있는 곳: {where}",
    "inspect.twice_many": "훅이 두 개 이상 있는 곳: {where}",
    "inspect.written_many": "매개변수 {name}에 {count}번 값을 썼습니다. 위치: {where}",
    "inspect.more_written": " (그 밖에도 매개변수 {count}개에 두 번 이상 썼습니다)",
    "inspect.never_one": "값을 한 번도 쓰지 않은 매개변수: {names}",
    "inspect.never_many": "값을 한 번도 쓰지 않은 매개변수: {names}",
    "inspect.through_data": "{names}: .data를 거쳐 바뀌어서 Autograd가 이 변경을 볼 수 없습니다",
    "inspect.replaced_one": "{names}: 새 Parameter 객체로 바뀌었습니다",
    "inspect.replaced_many": "{names}: 새 Parameter 객체들로 바뀌었습니다",
    "inspect.hooks_left_one": "남은 훅 {count}개: {shown}",
    "inspect.hooks_left_many": "남은 훅 {count}개: {shown}",
    "inspect.global_hook": "전역 {kind} 훅 {name}(모든 모듈에서 실행됨)",
    "inspect.hook_on": "{where}에 있는 {kind} 훅 {name}",
    "inspect.and_more": ", 그 밖에 {count}개",
    # -- kind: a hook's kind as a ✗ line names it (hookviz.hook_kinds owns the kinds)
    "kind.forward_pre": "순전파 사전",
    "kind.forward": "순전파",
    "kind.backward_pre": "역전파 사전",
    "kind.backward": "역전파",
    "kind.tensor": "Tensor",
    "kind_words.forward_pre": "순전파 사전",
    "kind_words.forward": "순전파",
    "kind_words.backward_pre": "역전파 사전",
    "kind_words.backward": "역전파",
    "kind_words.tensor": "Tensor",
    # -- diagnosis
    "diagnosis.called_at_registration": "register_*_hook(...) 안에서 {hook}(...) 함수를 호출했습니다. 그래서 훅이 그 자리에서, 그 호출에 적힌 인자로 한 번 실행되었습니다",
    "diagnosis.plain_tensor": "모듈이 Parameter로 가지고 있는 {name} 속성에 일반 Tensor를 대입했습니다",
    "diagnosis.hook_returned": "모델은 Tensor로 호출되었는데, 그 안의 한 계층은 {kind} 객체를 받았습니다. 순전파 훅의 반환값이 모듈의 출력을 대신했습니다",
    "diagnosis.backward_returned": "역전파 훅이 받은 변화도를 대신할 수 없는 값을 반환했습니다",
    "diagnosis.needs_matrix": "2차원 행렬이 필요한 행렬 곱에 1차원 Tensor가 들어왔습니다",
    "diagnosis.tuple_index_one": "{tuple}[{index}] 항목은 없습니다: 이 {tuple} 튜플의 항목은 {count}개보다 적습니다",
    "diagnosis.tuple_index_many": "{tuple}[{index}] 항목은 없습니다: 이 {tuple} 튜플의 항목은 {count}개보다 적습니다",
    "diagnosis.no_attribute": "{module} 모듈에는 {attribute} 속성이 없습니다: apply 메소드는 그 속성이 있는 모듈만이 아니라 모든 모듈에 여러분의 함수를 호출합니다",
    "diagnosis.late_binding": "훅이 찾은 키 {key}: 반복문이 끝난 뒤에 읽은 반복 변수의 마지막 값입니다",
    "diagnosis.leaf_in_place": "Autograd가 기록하는 동안 매개변수를 제자리 연산으로 바꿨습니다",
    "diagnosis.grad_input_none": "첫 번째 계층의 훅에서 grad_input[0] 값이 None입니다: 그 입력에는 변화도가 필요 없습니다",
    "diagnosis.grad_none": "코드가 읽을 때 .grad 값이 None이었습니다",
    "diagnosis.hook_signature": "PyTorch가 훅을 호출할 때 넘긴 인자를 그 훅이 받지 않습니다",
    "diagnosis.hook_is_none": "PyTorch가 None인 훅을 호출하려고 했습니다",
    "diagnosis.integer_parameter": "정수 Tensor에 변화도를 요구했습니다(Parameter는 변화도를 요구합니다)",
    "diagnosis.two_dtypes": "행렬 곱에 dtype이 서로 다른 두 Tensor가 들어왔습니다",
    "diagnosis.shapes": "행렬 곱의 두 모양이 서로 맞지 않습니다",
    "diagnosis.full_hook_in_place": "전체 역전파 훅(full backward hook)이 있는 모듈의 출력을 제자리 연산이 수정했습니다",
    "diagnosis.tuple_inputs": "산술 연산에 inputs 튜플 전체가 들어왔습니다",
    "diagnosis.copy_shape": "copy_ 메소드에 매개변수와 모양이 맞지 않는 원본이 들어왔습니다",
    "diagnosis.no_grad_tensor": "변화도가 필요 없는 Tensor에 Tensor 훅을 등록했습니다",
    "diagnosis.with_one": "with 블록이 {owner}.{method} 메소드를 인자 {given}개(self 포함)로 호출했는데, 이 메소드가 받는 인자는 {takes}개입니다",
    "diagnosis.with_many": "with 블록이 {owner}.{method} 메소드를 인자 {given}개(self 포함)로 호출했는데, 이 메소드가 받는 인자는 {takes}개입니다",
    "diagnosis.method_one": "{owner}.{method} 메소드를 인자 {given}개(self 포함)로 호출했는데, 그 def가 받는 인자는 {takes}개입니다",
    "diagnosis.method_many": "{owner}.{method} 메소드를 인자 {given}개(self 포함)로 호출했는데, 그 def가 받는 인자는 {takes}개입니다",
    # The hints of the diagnosed mistakes (diagnose.py): a nudge, and a sharper one (more).
    # -- hint.leaf_in_place
    "hint.leaf_in_place.nudge": "Autograd는 모든 매개변수를 추적하며, 기록하는 동안에는 매개변수를 제자리 연산으로 바꾸는 것을 허용하지 않습니다. 값을 바꾸는 동안 기록을 끄세요. torch 문서에서 torch.no_grad()를 읽어 보세요(또는 이 일을 대신해 주는 nn.init 함수를 쓰세요).",
    "hint.leaf_in_place.more": "매개변수를 바꾸는 반복문을 `with torch.no_grad():` 블록 안에 넣으세요. .data는 쓰지 마세요. .data는 변경을 Autograd에게서 숨길 뿐입니다.",
    # -- hint.grad_input_is_none
    "hint.grad_input_is_none.nudge": "grad_input에는 모듈의 입력에 대한 변화도가 들어 있고, 변화도가 필요 없는 입력 자리에는 None이 들어갑니다. 첫 번째 계층의 입력 x는 변화도를 요구하지 않습니다. 계층의 출력에 대한 변화도는 다른 인자인 grad_output에 있습니다. torch 문서의 Module.register_full_backward_hook 항목을 보세요.",
    "hint.grad_input_is_none.more": "grad_output[0]을 쓰세요. 출력이 손실까지 이어지는 계층이라면 이 값은 None이 아닙니다.",
    # -- hint.grad_is_none
    "hint.grad_is_none.nudge": "Tensor의 .grad는 역전파가 그 Tensor에 도달할 때까지 None이고, 잎(leaf)이 아닌 Tensor(활성값)라면 역전파 전에 retain_grad()를 호출하지 않는 한 계속 None입니다. 변화도가 도착하는 곳에서 읽거나(훅 안에서, 변화도 인자로), 순전파 중에 그 Tensor의 retain_grad()를 호출하세요.",
    # -- hint.hook_signature
    "hint.hook_signature.nudge": "PyTorch는 훅의 종류마다 다른 인자로 훅을 호출합니다. 순전파 사전 훅은 hook(module, inputs), 순전파 훅은 hook(module, inputs, output), 전체 역전파 훅은 hook(module, grad_input, grad_output), Tensor 훅은 hook(grad) 형태입니다. 등록한 함수가 그 종류의 인자를 받는지 확인하세요.",
    # -- hint.not_a_function
    "hint.not_a_function.nudge": "register_*_hook에는 함수 자체를 넘겨야 합니다. 호출 안에 hook(...)처럼 쓰면 함수가 그 자리에서 한 번 실행되고, 그 반환값(흔히 None)이 등록됩니다.",
    # -- hint.weight_layout
    "hint.weight_layout.nudge": "W는 nn.Linear의 가중치처럼 (out_features, in_features) 모양으로 저장되므로, 모양이 (n, in_features)인 배치 x에는 W의 전치를 곱합니다. torch 문서의 torch.nn.Linear 항목을 보세요.",
    # -- hint.full_hook_in_place
    "hint.full_hook_in_place.nudge": "전체 역전파 훅은 모듈의 출력을 감싸며, 그 뒤의 제자리 연산(ReLU(inplace=True) 같은)은 감싼 출력을 수정할 수 없습니다. 출력에 건 Tensor 훅(순전파 훅 안에서 등록)은 같은 변화도를 보면서도 제자리 연산 뒤에 문제없이 동작합니다.",
    # -- hint.tuple_inputs
    "hint.tuple_inputs.nudge": "inputs는 모듈을 호출할 때 넘긴 위치 인자들의 튜플입니다. 인자가 하나뿐이어도 마찬가지이며, 입력 Tensor는 그 첫 번째 항목입니다.",
    # -- hint.copy_shape
    "hint.copy_shape.nudge": "copy_ 메소드에는 매개변수의 모양으로 브로드캐스트되는 원본이 필요합니다. 모양이 고정된 Tensor는 한 모델에만 맞습니다. 매개변수 자신으로부터 원본을 만들거나, 모양이 전혀 필요 없는 fill_ 메소드를 쓰세요.",
    # -- hint.no_grad_tensor
    "hint.no_grad_tensor.nudge": "Tensor 훅은 Autograd가 그 Tensor의 변화도를 계산할 때 실행되므로, 변화도를 요구하는 Tensor에만 등록할 수 있습니다.",
    # -- hint.integer_parameter
    "hint.integer_parameter.nudge": "Parameter가 변화도를 요구하려면 부동소수점 값을 담아야 하는데, 이 Parameter에는 정수가 들어왔습니다. 정수로 만든 torch.arange, 파이썬 정수로 만든 torch.tensor, LongTensor는 모두 int64입니다. nn.Parameter로 감싸기 전에 Tensor를 부동소수점으로 만드세요(torch.rand와 torch.zeros는 부동소수점입니다. 또는 dtype=에 모듈의 다른 매개변수의 dtype 등을 넘기세요).",
    # -- hint.dtype_mismatch
    "hint.dtype_mismatch.nudge": "dtype이 다른 두 Tensor가 행렬 곱에서 만났습니다. 흔히 float64 Tensor(numpy가 만든 것, 또는 numpy 배열이나 dtype=torch.float64로 torch.tensor가 만든 것)가 모델의 float32 Tensor 옆에 온 경우입니다. 모든 매개변수를 torch의 기본 dtype으로 만들거나, 함께 계산하는 Tensor의 dtype을 주세요(tensor.to(other.dtype)).",
    # -- hint.late_binding
    "hint.late_binding.nudge": "반복문 안에서 정의한 함수는 반복 변수를 정의할 때가 아니라 실행될 때 읽습니다. 그때는 반복문이 이미 끝났으므로, 그런 함수는 모두 마지막 값을 봅니다. 함수를 정의할 때 값을 고정하세요(기본 인자가 그 일을 합니다).",
    "hint.late_binding.more": "기본 인자는 def 문이 실행될 때 한 번 평가됩니다.",
    # -- hint.plain_tensor_as_parameter
    "hint.plain_tensor_as_parameter.nudge": "모듈이 어떤 이름으로 nn.Parameter를 가지고 있으면, nn.Module은 그 이름에 Parameter(또는 None)만 대입하도록 허용합니다. 일반 Tensor를 넣으면 parameters()와 모든 옵티마이저에서 빠지기 때문입니다. 값을 바꾸려면 Autograd를 끈 채(torch.no_grad) 기존 매개변수를 제자리에서 바꾸고, 새 매개변수를 만들려면 Tensor를 nn.Parameter로 감싸세요.",
    # -- hint.forward_hook_returned
    "hint.forward_hook_returned.nudge": "순전파 훅이 반환하는 값은 모듈의 출력을 대신하므로 다음 계층이 그 값을 받습니다. 본 것을 기록만 하는 훅은 아무것도(None) 반환하지 않아야 합니다. 채우고 있는 리스트나 딕셔너리를 반환하는 훅은 Tensor 대신 그 컨테이너를 넘기게 됩니다. torch 문서의 Module.register_forward_hook 항목을 보세요.",
    "hint.forward_hook_returned.more": "출력을 저장한 뒤 return 문 없이 훅을 끝내거나, None을 반환하세요.",
    # -- hint.backward_hook_returned
    "hint.backward_hook_returned.nudge": "역전파 훅이 반환하는 값은 변화도를 대신합니다. 전체 역전파 훅의 반환값은 grad_input(모듈의 입력마다 하나씩, 각각 그 입력의 모양)을 대신하고, Tensor 훅의 반환값은 받은 변화도를 대신합니다. 기록만 하는 훅은 아무것도(None) 반환하지 않아야 하고, 변화도를 바꾸는 훅은 같은 모양의 Tensor를 반환해야 합니다.",
    # -- hint.needs_a_matrix
    "hint.needs_a_matrix.nudge": "torch.mm과 torch.addmm은 2차원 행렬만 받는데, 모양이 (features,)인 샘플 하나는 1차원입니다. @ 연산자(torch.matmul)는 nn.Linear처럼 1차원과 2차원 입력 모두에 동작합니다.",
    # -- hint.hook_tuple_index
    "hint.hook_tuple_index.nudge": "inputs와 grad_input에는 모듈 forward의 위치 인자마다 항목이 하나씩, grad_output에는 출력마다 하나씩 들어 있습니다. nn.Linear라면 각각 항목이 하나이며 인덱스는 0입니다. torch 문서의 Module.register_full_backward_hook과 register_forward_hook 항목을 보세요.",
    # -- hint.context_manager_signature
    "hint.context_manager_signature.nudge": "with 블록은 시작할 때 __enter__(self)를, 끝날 때 __exit__(self, exc_type, exc_value, traceback)을 호출합니다. self 뒤에 인자가 세 개이며, 블록이 정상적으로 끝났다면 모두 None입니다. 정확히 이 인자들을 받도록 정의하세요(def __exit__(self, *exc)는 몇 개든 받습니다).",
    # -- hint.method_signature
    "hint.method_signature.nudge": "파이썬은 메소드의 첫 번째 인자(self)로 객체 자신을 넘기고, 그다음에 호출의 인자들을 넘깁니다. 메소드의 def가 self를 먼저, 그다음 호출하는 쪽이 넘기는 인자들을 나열하는지 확인하세요.",
    # -- hint.module_lacks_attribute
    "hint.module_lacks_attribute.nudge": "apply 메소드는 모델의 모든 모듈에 여러분의 함수를 호출합니다. 컨테이너(Layer, Model, Sequential)도 포함되며, 그 속성은 일부 모듈에만 있습니다. 먼저 모듈의 종류를 확인하고(isinstance, 또는 is_function 같은 도우미 함수), 나머지 모듈은 그대로 두세요.",
    # -- hint.hooks_left
    "hint.hooks_left.nudge": "훅은 핸들의 remove()를 호출할 때까지 모듈에 남아 있고, 이후의 모든 호출에서 계속 실행됩니다. register_*_hook이 반환하는 핸들을 보관했다가, 작업이 끝나면 제거하세요. 작업 중에 오류가 나도 제거해야 합니다(torch.utils.hooks.RemovableHandle 참고).",
    "hint.hooks_left.more": "훅을 등록한 다음 try: 안에서 모델을 실행하고, finally: 안에서 모든 핸들을 제거하세요(또는 핸들을 컨텍스트 관리자로 쓰세요: `with module.register_forward_hook(...):`).",
    # -- hint.recursive_parameters
    "hint.recursive_parameters.nudge": "module.parameters()는 모듈 자신의 매개변수와 모든 하위 모듈의 매개변수를 내놓습니다. apply 메소드가 이미 모든 모듈에 여러분의 함수를 호출하므로, 각 매개변수는 조상 모듈마다 다시 방문됩니다. torch 문서에서 Module.parameters의 recurse 인자를 보세요.",
    "hint.recursive_parameters.more": "각 모듈에는 그 모듈이 직접 가진 매개변수만 요청하세요.",
    # -- hint.through_data
    "hint.through_data.nudge": "param.data는 Autograd의 기록 정보를 떼어 낸 매개변수의 저장 공간입니다. 이것을 거친 변경은 Autograd에게 보이지 않으므로, 역전파가 낡은 값을 조용히 쓸 수 있습니다. Autograd를 끈 채(torch.no_grad) 매개변수 자체를 바꾸세요.",
    # -- hint.new_parameter_objects
    "hint.new_parameter_objects.nudge": "새 nn.Parameter를 대입하면 옵티마이저가 이미 가지고 있는 객체가 바뀌므로, 옵티마이저는 계속 옛 객체를 학습시킵니다. 기존 매개변수의 값을 제자리에서 바꾸세요(fill_이나 copy_처럼 _로 끝나는 메소드).",
    # -- hint.gradient_changed_in_place
    "hint.gradient_changed_in_place.nudge": "Tensor 훅은 받은 변화도를 수정하면 안 됩니다. 같은 변화도 Tensor가 다른 Tensor로도 흘러갈 수 있어서(x + y는 변화도 객체 하나를 x와 y 모두에 넘깁니다) 그쪽도 함께 바뀝니다. 대신 새 Tensor를 반환하세요. torch 문서의 Tensor.register_hook 항목을 보세요.",
    "hint.gradient_changed_in_place.more": "제자리가 아닌 연산(grad.mul_(factor)가 아니라 grad * factor)으로 결과를 만들어 반환하세요. Tensor 훅이 반환하는 값이 변화도를 대신합니다.",
    # -- hint.global_hooks_left
    "hint.global_hooks_left.nudge": "torch.nn.modules.module.register_module_forward_hook(그리고 역전파 훅과 사전 훅을 등록하는 비슷한 함수들)은 전역 훅을 등록합니다. 전역 훅은 핸들의 remove()를 호출할 때까지 커널 안 모든 모델의 모든 모듈에서 실행됩니다. 이 핸들도 보관했다가, 작업이 끝나면 제거하세요. 작업 중에 오류가 나도 제거해야 합니다.",
    "hint.global_hooks_left.more": "여기서 전역 훅은 모듈에 건 훅과 다르지 않습니다. 반환된 핸들을 보관하고 finally: 안에서(또는 __exit__ 안에서) remove()를 호출하세요. 이 검사는 찾은 전역 훅을 제거했으므로, 이 노트북의 나머지 부분에서는 실행되지 않습니다.",
    # -- hint.frozen_parameters
    "hint.frozen_parameters.nudge": "requires_grad=False인 매개변수는 변화도를 받지 않으므로 옵티마이저가 절대 바꾸지 않습니다. 모델이 그 매개변수를 더 이상 학습하지 않게 됩니다. 값을 바꾸는 동안 Autograd를 끄는 것은 torch.no_grad()의 일이며, 이때 매개변수는 계속 학습할 수 있습니다. requires_grad=False(또는 requires_grad_(False))는 매개변수를 영구히 고정합니다. torch 문서의 torch.no_grad와 Tensor.requires_grad_ 항목을 보세요.",
    "hint.frozen_parameters.more": "매개변수는 기본값 requires_grad=True로 만들고, 제자리 변경은 requires_grad를 끄는 대신 `with torch.no_grad():` 안에서 하세요.",
    # -- hint.unregistered_parameter
    "hint.unregistered_parameter.nudge": "모듈은 Parameter가 속성으로 대입될 때(module.name = nn.Parameter(...)) nn.Module.__setattr__를 거쳐 그 Parameter를 등록합니다. module.__dict__에 직접 쓰거나 object.__setattr__를 쓰면 이 단계를 건너뜁니다. 속성은 생기지만, parameters(), state_dict(), 그리고 모든 옵티마이저가 그 매개변수를 놓칩니다.",
    # -- hint.gradient_changed_through_data
    "hint.gradient_changed_through_data.nudge": "grad.data를 제자리에서 바꾸면 변화도 Tensor 자체가 바뀝니다. .data는 같은 저장 공간에서 Autograd의 기록 정보(와 버전 카운터)만 떼어 낸 것이라서, 그 변경은 드러나지 않습니다. 같은 변화도 Tensor가 다른 Tensor로도 흘러갈 수 있어서(x + y는 변화도 객체 하나를 x와 y 모두에 넘깁니다) 그쪽도 함께 바뀝니다. 대신 새 Tensor를 반환하세요. torch 문서의 Tensor.register_hook 항목을 보세요.",
    "hint.gradient_changed_through_data.more": "grad 자체에 제자리가 아닌 연산(grad.data.mul_(factor)가 아니라 grad * factor)을 써서 결과를 만들고 반환하세요. Tensor 훅이 반환하는 값이 변화도를 대신합니다.",
    # -- hint.parameters_missed
    "hint.parameters_missed.nudge": "apply 메소드는 모든 모듈에 여러분의 함수를 한 번씩 호출합니다. 각 호출은 그 모듈이 가진 매개변수를 처리해야 합니다. 빠진 매개변수를 어느 모듈이 가지고 있는지 살펴보세요.",
    # -- hint.wrong_hook_kind
    "hint.wrong_hook_kind.nudge": "순전파 사전 훅은 forward보다 먼저 실행되며 입력만 봅니다. 순전파 훅은 forward 다음에 실행되어 출력을 보고, 반환값이 출력을 대신합니다. torch 문서의 Module.register_forward_hook과 register_forward_pre_hook 항목을 보세요.",
    # -- hint.rerun: the hint under an error no diagnosis recognises
    "hint.rerun.nudge": "답을 고치고, 그 셀을 실행한 다음, 이 검사를 다시 실행하세요.",
}
