def get_assert(output, context)
  { 'pass' => output == 'file', 'score' => 0.9, 'reason' => 'checked' }
end

def strict(output, context)
  output.length > 10
end
